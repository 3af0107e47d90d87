"""Several hosts in a PostgreSQL URL, libpq's ``HOST:PORT,HOST:PORT`` (or ``?host=A,B&port=P,Q``): tried in order, the
first that accepts wins, each within ``connect_timeout``, as libpq tries them. What psql 15.18 (libpq) does with the
same URLs: ``127.0.0.1:CLOSED,127.0.0.1:PORT`` connects to PORT; ``127.0.0.1:SILENT,127.0.0.1:PORT?connect_timeout=2``
(SILENT listens and never answers) connects to PORT after 2 s; two closed ports fail naming both; ``h1,h2/DB?host=X``
fails with "could not match 2 port numbers to 1 hosts". The store read the first form as one host whose port is
``CLOSED,127.0.0.1:PORT`` ("not a usable PostgreSQL URL"), ``h1,h2`` as one host name."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from p2w_runtime.store import connect_store
from p2w_runtime.store.contract.builders import observation
from p2w_runtime.testing.postgres import PostgresServer

SECRET = "Secret-pw-42"


def p2w_rt(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", url, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: a connection is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that never answers: the kernel completes the handshake, nothing reads."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield int(listener.getsockname()[1])


async def _record(url: str) -> float:
    """One event appended through ``url``; the seconds opening the store took."""
    started = time.monotonic()
    async with await connect_store(url) as store:
        opened = time.monotonic() - started
        await store.append([observation("r1", 1)])
    return opened


def _database(server: PostgresServer) -> str:
    return server.fresh_database().rsplit("/", 1)[1]


@pytest.mark.parametrize("form", ["netloc", "query"])
def test_the_first_host_that_accepts_is_the_store(postgres_server: PostgresServer, form: str) -> None:
    database, closed, port = _database(postgres_server), closed_port(), postgres_server.port
    url = (
        f"postgresql://postgres:{SECRET}@127.0.0.1:{closed},127.0.0.1:{port}/{database}"
        if form == "netloc"
        else f"postgresql://postgres:{SECRET}@/{database}?host=127.0.0.1,127.0.0.1&port={closed},{port}"
    )
    asyncio.run(_record(url))
    done = p2w_rt(url, "verify")
    assert done.returncode == 0 and done.stdout.startswith("ok: 1 stream, 1 event"), done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_a_first_host_that_never_answers_costs_its_connect_timeout(postgres_server: PostgresServer) -> None:
    """libpq's ``connect_timeout`` applies to each host (asyncpg's own host list shares one timeout, so the first
    silent host would have used it all and the second never been tried)."""
    database = _database(postgres_server)
    with silent_port() as silent:
        url = f"postgresql://postgres@127.0.0.1:{silent},127.0.0.1:{postgres_server.port}/{database}?connect_timeout=1"
        opened = asyncio.run(_record(url))
    assert opened >= 0.9


@pytest.mark.parametrize("secret_in", ["user-info", "option"])
def test_no_host_accepting_is_one_line_naming_each(secret_in: str) -> None:
    first, second = closed_port(), closed_port()
    url = f"postgresql://me:{SECRET}@127.0.0.1:{first},127.0.0.1:{second}/db"
    if secret_in == "option":
        url = f"postgresql://me@127.0.0.1:{first},127.0.0.1:{second}/db?password={SECRET}"
    done = p2w_rt(url, "runs")
    assert done.returncode == 2 and not done.stdout
    [line] = done.stderr.splitlines()
    assert line.endswith(
        f"cannot open (ConnectionError: 127.0.0.1:{first}: ConnectionRefusedError: [Errno 111] Connect call failed "
        f"('127.0.0.1', {first}); 127.0.0.1:{second}: ConnectionRefusedError: [Errno 111] Connect call failed "
        f"('127.0.0.1', {second}))"
    ), line
    assert SECRET not in done.stderr


def test_no_host_answering_is_the_no_answer_line() -> None:
    with silent_port() as first, silent_port() as second:
        done = p2w_rt(f"postgresql://me:{SECRET}@127.0.0.1:{first},127.0.0.1:{second}/db?connect_timeout=1", "runs")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.endswith(
        f"/db?connect_timeout=1: no answer from 127.0.0.1:{first},127.0.0.1:{second} within 1 s each "
        "(to wait longer, add ?connect_timeout=SECONDS to the URL)"
    ), line
    assert SECRET not in done.stderr


@pytest.mark.parametrize(
    ("hosts", "refusal"),
    [
        ("h1,h2/db?host=127.0.0.1", "2 ports for the hosts 127.0.0.1 (give one, or one per host)"),
        ("127.0.0.1/db?host=a,b,c&port=1,2", "2 ports for the hosts a,b,c (give one, or one per host)"),
        ("127.0.0.1/db?port=5432x", "port='5432x' in the URL is not a port number (or a list of them)"),
    ],
)
def test_hosts_and_ports_that_do_not_pair_are_refused_in_one_line(hosts: str, refusal: str) -> None:
    done = p2w_rt(f"postgresql://me:{SECRET}@{hosts}", "runs")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("error: postgresql://") and refusal in line, line
    assert SECRET not in done.stderr
