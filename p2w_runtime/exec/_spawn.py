"""Starting a user's agent command once per episode: through the shell, with the environment p2w-rt gives it.

General on purpose: the command, the environment added to p2w-rt's own, the folder it runs in; what it printed,
its exit code, and its answer when the last line of its standard output is ``{"answer": ...}``. Re-execution
(``rerun --exec``) uses it, and so can any command that runs an outside agent per task.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class AgentCommand:
    """What to start: ``command`` through the shell, in ``cwd``, with ``env`` over p2w-rt's environment."""

    command: str
    env: Mapping[str, str]
    cwd: Path | None = None
    timeout_s: float | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """How the command ended: exit code (None when killed at its timeout), output, and its answer if it said one."""

    returncode: int | None
    stdout: str
    stderr: str
    answer: Any = None

    def last_error_line(self) -> str:
        """The command's last line on standard error: what a one-line report names when the command failed."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


async def run_command(spec: AgentCommand) -> Finished:
    """Run ``spec`` to its end (or its timeout, when the whole process group is killed)."""
    process = await asyncio.create_subprocess_shell(
        spec.command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        cwd=spec.cwd,
        env={**os.environ, **spec.env},
        start_new_session=True,  # its own process group: a timeout ends the agent's children too
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), spec.timeout_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = await process.communicate()
        return Finished(None, out.decode(errors="replace"), err.decode(errors="replace"))
    stdout = out.decode(errors="replace")
    return Finished(process.returncode, stdout, err.decode(errors="replace"), _last_answer(stdout))


def _last_answer(stdout: str) -> Any:
    """The answer when the last non-empty line is a JSON object with an ``answer`` key, else None."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    try:
        said = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None
    return said.get("answer") if isinstance(said, dict) else None
