"""When the LLM endpoint refuses, ``replay`` and ``classify`` (as processes) end in their one error line: the
requests of the pass still waiting for a slot are cancelled without leaving a coroutine that was made but never
awaited (Python printed a "coroutine … was never awaited" warning for each, at exit)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.testing import HttpError, ScriptedLlm


def p2w_rt(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=db.parent)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("endpoint") / "p2w.db"
    done = p2w_rt(path, "import", str(example_run_bundles()[0]))  # 24 episodes: more than one pass's slots
    assert done.returncode == 0, done.stderr
    return path


@pytest.mark.parametrize(
    ("command", "what"),
    [(("replay", "earlier", "--judge", "rubric-llm"), "judge"), (("classify", "earlier", "--classifier", "llm"), "")],
)
def test_a_refused_request_ends_in_one_line_with_no_warning(
    db: Path, scripted_llm: ScriptedLlm, command: tuple[str, ...], what: str
) -> None:
    scripted_llm.handle_with(lambda _: HttpError(401, "Incorrect API key provided"))
    done = p2w_rt(db, *command, "--base-url", scripted_llm.base_url, "--api-key", "k", "--concurrency", "4")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if "llm." not in line]  # the client's structlog lines
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Incorrect API key provided" in lines[0], lines
    assert what in lines[0]
    assert "never awaited" not in done.stderr and "Traceback" not in done.stderr
    assert len(scripted_llm.chat_requests) >= 1
