"""When the LLM endpoint refuses, ``replay`` and ``classify`` (as processes) end in their one error line: the
requests of the pass still waiting for a slot are cancelled without leaving a coroutine that was made but never
awaited (Python printed a "coroutine … was never awaited" warning for each, at exit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2w_runtime.testing import HttpError, ScriptedLlm
from tests.helpers.p2w_process import p2w_rt


@pytest.mark.parametrize(
    ("command", "what"),
    [(("replay", "earlier", "--judge", "rubric-llm"), "judge"), (("classify", "earlier", "--classifier", "llm"), "")],
)
def test_a_refused_request_ends_in_one_line_with_no_warning(
    example_db: Path, scripted_llm: ScriptedLlm, command: tuple[str, ...], what: str
) -> None:
    """The example run's 24 episodes are more than one pass's slots."""
    scripted_llm.handle_with(lambda _: HttpError(401, "Incorrect API key provided"))
    done = p2w_rt(example_db, *command, "--base-url", scripted_llm.base_url, "--api-key", "k", "--concurrency", "4")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if "llm." not in line]  # the client's structlog lines
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Incorrect API key provided" in lines[0], lines
    assert what in lines[0]
    assert "never awaited" not in done.stderr and "Traceback" not in done.stderr
    assert len(scripted_llm.chat_requests) >= 1
