"""Not collected by the suite: `test_suite_interrupts.py` runs it in a pytest of its own and stops that pytest.

The first test holds the session's PostgreSQL server and then runs a command under CliRunner until it is
interrupted, as a Ctrl-C in the middle of the suite would find it; click turns the interrupt into an exit code,
so only the suite's own handling can stop the session there. The second test must never start.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.testing.postgres import PostgresServer


def test_a_command_runs_until_interrupted(postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database()
    Path(os.environ["P2W_TEST_STARTED_MARK"]).write_text(url)
    CliRunner().invoke(main, ["--db", url, "sites", "serve", "--port", "0"])


def test_never_reached_after_an_interrupt() -> None:
    Path(os.environ["P2W_TEST_STARTED_MARK"]).with_suffix(".reached").touch()
    time.sleep(300)
