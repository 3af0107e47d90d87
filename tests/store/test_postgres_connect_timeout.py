"""A PostgreSQL URL whose port never answers: the store gives up after ``connect_timeout`` (the URL's query, as libpq
reads it; 10 s without one) in one line naming host:port, never the password. A port that never answers needs no
PostgreSQL: a socket listening on 127.0.0.1 that never accepts, or accepts and never speaks."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from p2w_runtime.store import StoreError, StoreUnavailable, connect_store
from p2w_runtime.testing.postgres import PostgresServer

SECRET = "Secret-pw-42"


@contextmanager
def silent_port(accepting: bool) -> Iterator[int]:
    """A port on 127.0.0.1 that never answers: listening only (the kernel completes the handshake, nothing reads),
    or accepting connections and never writing a byte."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        held: list[socket.socket] = []
        stop = threading.Event()

        def accept() -> None:
            listener.settimeout(0.1)
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except TimeoutError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        if accepting:
            thread.start()
        try:
            yield listener.getsockname()[1]
        finally:
            stop.set()
            if accepting:
                thread.join(5)
            for conn in held:
                conn.close()


@pytest.mark.parametrize("accepting", [False, True], ids=["listening", "accepting"])
def test_the_command_gives_up_at_connect_timeout_in_one_line(accepting: bool) -> None:
    with silent_port(accepting) as port:
        url = f"postgresql://me:{SECRET}@127.0.0.1:{port}/db?connect_timeout=1"
        started = time.monotonic()
        command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", url, "runs"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        took = time.monotonic() - started
    assert done.returncode != 0
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert f"no answer from 127.0.0.1:{port} within 1 s" in lines[0] and "connect_timeout" in lines[0]
    assert SECRET not in done.stderr + done.stdout
    assert took < 45  # the process's start-up and the 1 s: asyncpg's own limit was 60 s


async def test_without_connect_timeout_the_limit_is_ten_seconds() -> None:
    with silent_port(accepting=True) as port:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as raised:
            await connect_store(f"postgresql://me:{SECRET}@127.0.0.1:{port}/db")
        took = time.monotonic() - started
    assert f"no answer from 127.0.0.1:{port} within 10 s" in str(raised.value) and SECRET not in str(raised.value)
    assert 9 < took < 45


@pytest.mark.parametrize("value", ["soon", "nan", "inf"])
async def test_a_connect_timeout_that_is_no_number_is_refused(value: str) -> None:
    with pytest.raises(StoreError, match=f"connect_timeout='{value}' in the URL is not a number of seconds") as raised:
        await connect_store(f"postgresql://me:{SECRET}@127.0.0.1:1/db?connect_timeout={value}")
    assert SECRET not in str(raised.value)


async def test_a_server_that_answers_opens_with_connect_timeout_in_its_url(postgres_server: PostgresServer) -> None:
    store = await connect_store(postgres_server.fresh_database() + "?connect_timeout=5")
    try:
        assert await store.log_end() == 0
    finally:
        await store.close()


@pytest.mark.parametrize(
    "password",
    [f"x@y?connect_timeout={SECRET}", f"x@y?{SECRET}=1", f"x@y?connect_timeout=1&{SECRET}=1", f"x@{SECRET}/db"],
    ids=["timeout", "option", "after-timeout", "host"],
)
def test_a_password_with_an_unescaped_at_is_refused_and_never_shown(password: str) -> None:
    """The URL parser ends such a password at its "@" and reads the rest as host, database or query, which messages
    name: the URL is refused before any of it is read, in one line."""
    url = f"postgresql://me:{password}@127.0.0.1:1/db"
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", url, "runs"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert done.stderr.splitlines() == [
        "error: postgresql://***@127.0.0.1:1/db: not a usable PostgreSQL URL (is the port a number, every @ : / ? # "
        "of the password %-escaped?)"
    ]
    assert SECRET not in done.stderr + done.stdout
