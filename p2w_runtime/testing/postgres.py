"""A throwaway PostgreSQL server for tests and benchmarks: initdb in a temporary folder, 127.0.0.1, a free port.

PostgreSQL refuses to run as root, so when this process is root the server runs as the ``postgres`` system
user (``runuser``) in a folder it owns. ``fresh_database()`` gives each test its own empty database.

The server runs in a session of its own, so a Ctrl-C meant for the test run does not shut it down under a running
test; ``stop`` (the fixture's teardown, also after Ctrl-C or SIGTERM) stops it, and a watchdog process
(``_pg_watchdog.py``) stops it when the starting process dies without that (SIGKILL, ``os._exit``, a crash).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from p2w_rt.schemas import uuid7

SYSTEM_USER = "postgres"


def postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (Debian's versioned folder first), or None if not installed."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").exists():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """``with PostgresServer() as pg: pg.fresh_database()`` -> a ``postgresql://`` URL of an empty database."""

    def __init__(self) -> None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install -y postgresql)")
        self.bin = bin_dir
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="p2w-pg-"))
        self.data = self.root / "data"
        self._as_root = os.geteuid() == 0
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watch_fd: int | None = None

    def _command(self, *argv: str) -> list[str]:
        command = [str(self.bin / argv[0]), *argv[1:]]
        return ["runuser", "-u", SYSTEM_USER, "--", *command] if self._as_root else command

    def _run(self, *argv: str) -> None:
        subprocess.run(self._command(*argv), check=True, capture_output=True, text=True, start_new_session=True)

    def _stop_command(self) -> list[str]:
        return self._command("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")

    def _start_watchdog(self) -> None:
        read_fd, self._watch_fd = os.pipe()  # the write end is not inherited by anything this process execs
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("_pg_watchdog.py")), str(read_fd), str(self.root),
                 *self._stop_command()],
                pass_fds=(read_fd,), start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        finally:
            os.close(read_fd)

    def start(self) -> PostgresServer:
        self._start_watchdog()
        if self._as_root:
            shutil.chown(self.root, SYSTEM_USER)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        self._start_server()
        return self

    def _start_server(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def kill(self) -> None:
        """SIGKILL the postmaster and its backends, as a crash would: nothing is shut down cleanly, and every
        client's connection breaks mid-statement. ``restart`` brings it back (crash recovery from the WAL)."""
        master = self.postmaster_pid()
        listing = Path(f"/proc/{master}/task/{master}/children")  # without it, backends exit on the postmaster's death
        children = listing.read_text().split() if listing.exists() else []
        for pid in [master, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def restart(self, timeout_s: float = 60.0) -> None:
        """Start the server again after ``kill``, on the same port and data; retried while the killed processes
        still hold the shared memory."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self._start_server()
                return
            except subprocess.CalledProcessError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def fresh_database(self) -> str:
        """A new, empty database's URL."""
        name = "t_" + uuid7().replace("-", "")
        command = [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-q"]
        subprocess.run([*command, "-c", f'CREATE DATABASE "{name}"'], check=True, capture_output=True)
        return self.url(name)

    def stop(self) -> None:
        """Stop the server if it runs and remove its folder; if that is cut short (a second Ctrl-C) the watchdog,
        let go here, does both in its own session."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
            shutil.rmtree(self.root, ignore_errors=True)
        finally:
            if self._watch_fd is not None:
                os.close(self._watch_fd)
                self._watch_fd = None
            if self._watchdog is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._watchdog.wait(timeout=30)
                self._watchdog = None

    def __enter__(self) -> PostgresServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()
