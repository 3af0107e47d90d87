"""Shared fixtures. The scripted LLM server is the project's only test double."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from p2w_runtime.testing import ScriptedLlm


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLlm]:
    """An OpenAI-compatible server on 127.0.0.1 answering from a script.

    Hosted on its own thread, so async tests, sync tests (CliRunner) and subprocesses can all
    call it; script with ``.script(...)`` / ``.rule(...)``, inspect ``.requests`` / ``.chat_requests``.
    """
    with ScriptedLlm() as server:
        yield server
