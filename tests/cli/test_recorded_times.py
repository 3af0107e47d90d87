"""A recorded time on the terminal says it is UTC (``Z``): bare, a reader east or west of Greenwich takes it for local
time. ``--json`` keeps the recorded ISO time, whose ``Z`` already says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.chinos_runs import TRUTH, build_runs


def runs(db: Path, *args: str, zone: str) -> str:
    """``p2w-rt runs`` in a process whose local time zone is ``zone``."""
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), "runs", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=db.parent, env={**os.environ, "TZ": zone}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_runs_marks_the_recorded_time_utc_in_any_time_zone(tmp_path: Path) -> None:
    db = build_runs(tmp_path / "p2w.db", (("zoned run", TRUTH, True),))
    for zone in ("Asia/Kolkata", "America/Los_Angeles"):
        (row,) = [json.loads(line) for line in runs(db, "--json", zone=zone).splitlines()]
        at = row["recorded_at"]
        assert at.endswith("Z"), "the JSON time carries its zone already, as recorded"
        (line,) = [line for line in runs(db, zone=zone).splitlines() if "zoned run" in line]
        assert f" {at[:19]}Z " in line, line
