"""The ``p2w-rt`` command run in this process on a store it is given, and the mismatches ``verify`` names."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from p2w_rt.cli import main


def invoke(db: Path, *args: str) -> Result:
    """``p2w-rt --db DB ARGS``; an exception the command lets out fails the test with its own traceback."""
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def problems(result: Result) -> list[str]:
    """The ``MISMATCH`` lines of a ``verify``: what it found wrong, one line each."""
    return [line for line in result.output.splitlines() if line.startswith("MISMATCH")]
