"""`replay` and `classify` (as processes) against an endpoint that never finishes an answer or floods one: the command
ends at `--llm-timeout` in its one error line naming the endpoint, the judgments made before are kept, and an answer
over the size limit fails that episode's result without being read whole."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from p2w_runtime.testing import ScriptedLlm
from tests.helpers.judge_replies import answer
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.stalling_llm import Answer, Flood, StallingLlm, Trickle

KEY = "sk-never-shown-5678"
MIB = 2**20


def copy_of(example_db: Path, tmp_path: Path) -> Path:
    """The example run in this test's own store: a pass appends to it."""
    db = tmp_path / "p2w.db"
    shutil.copy(example_db, db)
    return db


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "llm." not in line]  # the client's structlog lines


def test_replay_ends_at_the_timeout_and_keeps_the_judgments_made(
    example_db: Path, tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    db = copy_of(example_db, tmp_path)

    def stall_after_two(n: int, request: dict[str, Any]) -> Answer:
        return answer(request) if n < 2 else Trickle(every_s=0.2)

    with StallingLlm(stall_after_two) as server:
        done = p2w_rt(
            db, "replay", "earlier", "--judge", "rubric-llm", "--base-url", server.base_url, "--api-key", KEY,
            "--concurrency", "1", "--llm-timeout", "1", "--max-retries", "0",
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "timeout after 1s" in lines[0] and f"127.0.0.1:{server.port}" in lines[0] and "kept" in lines[0]
    assert KEY not in done.stderr + done.stdout and "Traceback" not in done.stderr

    scripted_llm.handle_with(answer)
    again = p2w_rt(db, "replay", "earlier", "--judge", "rubric-llm", "--base-url", scripted_llm.base_url)
    assert again.returncode == 0, again.stderr
    assert sum(line.startswith("cached ") for line in again.stdout.splitlines()) == 2
    assert len(scripted_llm.chat_requests) == 22


def test_classify_ends_at_the_timeout(example_db: Path, tmp_path: Path) -> None:
    with StallingLlm(lambda n, request: Trickle(every_s=0.2)) as server:
        done = p2w_rt(
            copy_of(example_db, tmp_path), "classify", "earlier", "--classifier", "llm", "--base-url", server.base_url,
            "--api-key", KEY, "--llm-timeout", "1", "--max-retries", "0",
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and "timeout after 1s" in lines[0] and f"127.0.0.1:{server.port}" in lines[0], lines
    assert KEY not in done.stderr and "Traceback" not in done.stderr


def test_a_flooded_answer_fails_its_judgment_unread(example_db: Path, tmp_path: Path) -> None:
    size = 256 * MIB

    def flood_first(n: int, request: dict[str, Any]) -> Answer:
        return Flood(size) if n == 0 else answer(request)

    with StallingLlm(flood_first) as server:
        done = p2w_rt(
            copy_of(example_db, tmp_path), "replay", "earlier", "--judge", "rubric-llm", "--base-url", server.base_url,
            "--concurrency", "1", "--max-retries", "0",
        )  # fmt: skip
    assert done.returncode == 1  # a failed result, recorded as such
    assert "judged 24, cached 0, failed 1" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "over the 16 MiB limit" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert server.body_bytes_sent[0] < size / 8
