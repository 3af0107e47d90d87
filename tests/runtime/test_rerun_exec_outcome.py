"""`rerun --exec`: an agent whose every model call is answered as recorded can still fail; its episode is identical
only when the recording's agent failed too, else it differs and the report shows the agent's last error line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.exec_support import p2w_rt

pytestmark = pytest.mark.slow  # Chromium, once per recording

TASK = "Lena_Fischer_A1"
SUCCEEDS = 'import json; print(json.dumps({"answer": "done"}))'
FAILS = 'import sys; print("starting", file=sys.stderr); sys.exit("agent.py: the cart is gone")'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """Runs 'ok' (its agent answered) and 'failed' (its agent exited 1), each of one episode with no model call."""
    folder = tmp_path_factory.mktemp("outcome")
    (folder / "succeeds.py").write_text(SUCCEEDS)
    (folder / "fails.py").write_text(FAILS)
    db = folder / "p2w.db"
    for label, script in (("ok", "succeeds.py"), ("failed", "fails.py")):
        done = p2w_rt(
            db, "record", "--exec", f"{sys.executable} {folder / script}", "--base-url", "http://127.0.0.1:9/v1",
            "--model", "m", "--label", label, "--task", TASK,
        )  # fmt: skip
        assert ("1 answered" if label == "ok" else "1 error") in done.stdout, done.stdout + done.stderr
    yield db, folder


def rerun(recorded: tuple[Path, Path], label: str, script: str, *more: str) -> tuple[int, str]:
    db, folder = recorded
    done = p2w_rt(db, "rerun", label, "--exec", f"{sys.executable} {folder / script}", *more)
    return done.returncode, done.stdout


def test_an_agent_failing_where_the_recording_answered_differs_with_its_error_line(
    recorded: tuple[Path, Path],
) -> None:
    code, text = rerun(recorded, "ok", "fails.py")
    assert code == 1, text
    assert "0 identical, 1 differ" in text and f"  {TASK}: outcome differs" in text
    assert "recorded:    answered after 1 step" in text and "re-executed: the agent exited 1" in text
    assert "the agent exited 1: agent.py: the cart is gone" in text
    code, out = rerun(recorded, "ok", "fails.py", "--json")
    (episode,) = json.loads(out)["episodes"]
    assert code == 1 and episode["exit_code"] == 1 and episode["last_error_line"] == "agent.py: the cart is gone"


def test_an_agent_failing_as_its_recording_did_is_identical_and_succeeding_there_differs(
    recorded: tuple[Path, Path],
) -> None:
    code, text = rerun(recorded, "failed", "fails.py")
    assert code == 0 and f"  {TASK}: identical" in text, text
    code, text = rerun(recorded, "failed", "succeeds.py")
    assert code == 1 and f"  {TASK}: outcome differs" in text, text
    assert "recorded:    error after " in text and "agent.py: the cart is gone" in text
    assert "re-executed: the agent exited 0" in text
    code, text = rerun(recorded, "ok", "succeeds.py")
    assert code == 0 and f"  {TASK}: identical" in text, text


def test_a_run_of_record_exec_is_not_forked_and_the_refusal_says_what_does_instead(
    recorded: tuple[Path, Path],
) -> None:
    db, folder = recorded
    done = p2w_rt(
        db, "fork", "ok", TASK, "--at-step", "1", "--exec", f"{sys.executable} {folder / 'succeeds.py'}",
        "--base-url", "http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: run 'ok' was recorded by `record --exec` (exec:succeeds.py): fork --exec"), line
    assert "rerun --exec CMD --restore har" in line
    assert "ok-" not in p2w_rt(db, "runs").stdout  # no run written
