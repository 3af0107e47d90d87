"""`record` and `fork` (as processes) with the own agent against an endpoint that never finishes an answer: their
`--llm-timeout` and `--max-retries` reach the agent's model client, so the episode ends at the deadline as an error,
each timed-out attempt and the end recorded, instead of waiting for an answer that never comes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.p2w_process import p2w_rt
from tests.helpers.stalling_llm import StallingLlm, Trickle

pytestmark = pytest.mark.slow

TASK = "Priya_Raman_A1"
LIMITS = ("--llm-timeout", "1", "--max-retries", "1")
"""Two attempts of a second each; the defaults (120 s, 4 retries) would outlast the helper's 300 s limit."""
FAILED = "failed 2 attempt(s) for planner"


def recorded_end(db: Path, label: str) -> tuple[list[str | None], dict]:
    """The errors of the episode's planner calls, and its ``episode.finished`` payload."""
    shown = p2w_rt(db, "show", label, TASK, "--json")
    assert shown.returncode == 0, shown.stderr
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    errors = [e["payload"]["error"] for e in events if e["type"] == "llm.call" and e["payload"]["error"]]
    return errors, events[-1]


def test_record_ends_the_episode_at_its_llm_timeout(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    with StallingLlm(lambda n, request: Trickle(every_s=0.2)) as server:
        done = p2w_rt(
            db, "record", "--model", "m", "--base-url", server.base_url, "--api-key", "k", "--task", TASK,
            "--label", "stalled", *LIMITS,
        )  # fmt: skip
        asked = server.requests
    assert done.returncode == 1 and "1 episode; 1 error" in done.stdout, done.stdout + done.stderr
    assert FAILED in done.stderr and "last error: timeout after 1s" in done.stderr, done.stderr
    assert asked == 2, "--max-retries 1: one retry"
    errors, end = recorded_end(db, "stalled")
    assert errors == ["timeout after 1s"] * 2
    assert end["type"] == "episode.finished" and end["payload"]["end_reason"] == "error"
    assert FAILED in end["payload"]["detail"]


def test_fork_ends_its_live_episode_at_its_llm_timeout(example_db: Path, tmp_path: Path) -> None:
    db = Path(shutil.copy(example_db, tmp_path / "p2w.db"))
    with StallingLlm(lambda n, request: Trickle(every_s=0.2)) as server:
        done = p2w_rt(
            db, "fork", "earlier", TASK, "--at-step", "2", "--base-url", server.base_url, "--api-key", "k",
            "--label", "forked", *LIMITS,
        )  # fmt: skip
        asked = server.requests
    assert done.returncode == 1 and "restored by" in done.stdout, done.stdout + done.stderr
    assert "error: the forked episode failed" in done.stderr and "timeout after 1s" in done.stderr, done.stderr
    assert asked == 2, "steps before 2 are served from the recording; step 2's planner call is tried twice"
    errors, end = recorded_end(db, "forked")
    assert errors == ["timeout after 1s"] * 2
    assert end["type"] == "episode.finished" and end["payload"]["end_reason"] == "error"
    assert FAILED in end["payload"]["detail"]
