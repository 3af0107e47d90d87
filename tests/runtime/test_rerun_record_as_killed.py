"""`rerun --record-as LABEL` killed while it copies the re-executed episodes, then given again: the run it left
unfinished under LABEL is completed, each task once, instead of the label being refused for good.

The copy is one append per episode, so the kill is placed between two of them: the test takes SQLite's write lock
as soon as the new run's ``run.started`` is committed and holds it while the process is killed with SIGKILL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.demo.examples import example_run_bundles
from tests.helpers.write_lock_kill import kill_once_written

SOURCE = "earlier"
TASKS = ("Lena_Fischer_A1", "Lena_Fischer_B1", "Marcus_Okafor_A1", "Marcus_Okafor_B1", "Priya_Raman_A1")
P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def copy_runs(db: Path, label: str) -> list[dict[str, object]]:
    code, out, err = invoke(db, "runs", "--json")
    assert code == 0, err
    return [r for r in map(json.loads, out.splitlines()) if r["label"] == label]


def killed_while_copying(db: Path, label: str) -> None:
    """Start ``rerun --record-as label``; once its run is started, hold the write lock, then SIGKILL it."""
    args = [P2W_RT, "--db", str(db), "rerun", SOURCE, *TASKS, "--record-as", label]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=db.parent)
    kill_once_written(proc, db, "SELECT 1 FROM run_labels WHERE label = ?", (label,))


def test_a_copy_killed_midway_is_completed_by_the_same_rerun_given_again(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    earlier = next(b for b in example_run_bundles() if b.stem == SOURCE)
    assert invoke(db, "import", str(earlier))[0] == 0

    killed_while_copying(db, "again")
    [left] = copy_runs(db, "again")
    assert left["status"] == "unfinished" and left["episodes"] < len(TASKS), left

    code, out, err = invoke(db, "rerun", SOURCE, *TASKS, "--record-as", "again")
    assert code == 0, err
    assert f"recorded as again ({left['run_id']})" in out
    [done] = copy_runs(db, "again")
    assert done["status"] == "completed"
    assert (done["episodes"], done["attempts"]) == (len(TASKS), len(TASKS)), "each task copied once"
    code, out, _ = invoke(db, "show", "again", "--json")
    assert sorted(json.loads(line)["task_id"] for line in out.splitlines()) == sorted(TASKS)
    assert json.loads(invoke(db, "verify", "--json")[1])["ok"]

    code, _, err = invoke(db, "rerun", SOURCE, TASKS[0], "--record-as", "again")
    assert code != 0 and "'again' is already used" in err and len(err.strip().splitlines()) == 1, "finished: taken"
