"""The scripted LLM answering as the sample agent, for the tests that record the sample tasks with `record`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript


@contextmanager
def sample_agent_llm() -> Iterator[ScriptedLlm]:
    """A server on 127.0.0.1 that plays the sample agent on every sample task, stopped at the block's end."""
    with ScriptedLlm() as server:
        server.handle_with(SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks()))
        yield server
