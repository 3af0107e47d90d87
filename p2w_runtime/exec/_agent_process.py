"""One run of the outside agent's command for one task: its environment, its answer, its exit. ``record --exec``
and ``rerun --exec`` both start their agents here.

The agent says its answer in the last line of its standard output, ``{"answer": ...}``, or in the file named by
``P2W_ANSWER_FILE`` (the same JSON, or plain text), which wins when it is not empty. Its exit status and the tail of
its standard error end the episode. It runs in a session of its own, under ``_group_watch.py``, so that its children
(a Node agent's browser driver, a shell's pipeline, a wrapper script's background job) die with it: when its episode
ends, at its time limit, on Ctrl-C, and when p2w-rt is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sys
from collections import deque
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2w_runtime.domain import TaskLike
from p2w_runtime.errors import UserError
from p2w_runtime.redaction import redact_agent_text
from p2w_runtime.scratch import scratch_folder

STDERR_TAIL = 2000
"""Characters of the agent's standard error kept for an episode that failed, cut after it was redacted (a key
straddling the cut would leave a fragment no pattern knows)."""
LINE_LIMIT = 16 * 1024 * 1024
"""Bytes of one stdout line read (the answer is the last line); a longer line stops the agent."""
GROUP_WATCH = Path(__file__).with_name("_group_watch.py")


def dies_with_p2w(command: list[str]) -> list[str]:
    """``command`` killed when this process dies, even by ``kill -9``: through util-linux's ``setpriv --pdeathsig``
    (Linux), since a child in a session of its own, or a Chromium, is told nothing when its parent goes. Where
    ``setpriv`` is missing, ``command`` as it is."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def group_dies_with_p2w(command: list[str]) -> list[str]:
    """``command`` under ``_group_watch.py``, which kills the command's process group, its children with it, when
    this process dies (Linux); ``pdeathsig`` alone would reach only the command. Elsewhere, ``command`` as it is."""
    if sys.platform != "linux" or not sys.executable:
        return command
    return [sys.executable, "-I", "-S", str(GROUP_WATCH), str(os.getpid()), *command]


def check_program(program: str) -> None:
    """``UserError`` in one line when ``program`` cannot be started: found nowhere, or given by its path but not
    executable (a script without ``chmod +x``), which asks for another remedy than a path."""
    if shutil.which(program) is not None:
        return
    if os.sep in program and Path(program).is_file():
        raise UserError(
            f"--exec: {program!r} is not executable (chmod +x it, or run it through its interpreter: python {program})"
        )
    raise UserError(f"--exec: {program!r} is not a program found here (give its path, or put it on PATH)")


@dataclass(frozen=True, slots=True)
class AgentExit:
    status: int | None
    """The exit code; None when the agent was killed at its time limit."""
    answer: str | None
    stderr_tail: str
    """Its standard error's last ``STDERR_TAIL`` characters, redacted (``redact_agent_text``), paths ``portable``."""
    stopped: str | None = None
    """Why p2w-rt stopped the agent before it exited (a stdout line beyond ``LINE_LIMIT``), in one line."""

    def last_error_line(self) -> str:
        """Why p2w-rt stopped the agent, else its last line on standard error: what a one-line report names when it
        failed."""
        if self.stopped is not None:
            return self.stopped
        lines = [line for line in self.stderr_tail.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""

    def how_it_ended(self) -> str:
        """ "exited N", "was killed by SIGNAL" or "was killed at its time limit", and its last error line if it wrote
        one: a report's words."""
        how = "was killed at its time limit (--timeout)" if self.status is None else exited(self.status, "exited")
        said = self.last_error_line()
        return f"{how}: {said}" if said else how


def exited(status: int, words: str) -> str:
    """``WORDS N`` ("exited with status 3"), or "was killed by SIGKILL" when a signal ended the agent (the OOM
    killer, a ``kill -9``): the status a death by signal leaves (-9) names no exit the agent chose."""
    if status < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-status).name}"
    return f"{words} {status}"


def task_file(task: TaskLike, folder: Path) -> Path:
    """``P2W_TASK_FILE``: the task as JSON (task_id, intent, start_url, persona, level), written into ``folder``, so
    an agent in any language reads its task without knowing the dataset's layout."""
    path = folder / f"{task.task_id}.json"
    described = {
        "task_id": task.task_id,
        "intent": task.intent,
        "start_url": task.start_url,
        "persona": task.persona,
        "level": task.level,
    }
    path.write_text(json.dumps(described, ensure_ascii=False), encoding="utf-8")  # whatever the locale
    return path


def answer_of(stdout_last_line: str | None, answer_file: Path) -> str | None:
    """The agent's answer: the answer file when it holds one, else the last stdout line's ``{"answer": ...}``."""
    if answer_file.is_file() and (text := answer_file.read_text(encoding="utf-8", errors="replace").strip()):
        return _answer_field(text) or text
    return _answer_field(stdout_last_line or "")


def _answer_field(line: str) -> str | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("answer") is None:
        return None
    answer = data["answer"]
    return answer if isinstance(answer, str) else json.dumps(answer)


async def run_agent(
    command: list[str],
    env: dict[str, str],
    answer_file: Path,
    *,
    cwd: Path | None = None,
    timeout_s: float | None = None,
) -> AgentExit:
    """Run ``command`` with ``env`` added to this process's environment until it exits, in ``cwd``; its exit,
    cancelling it, or ``timeout_s`` passing kills its process group (what it left running, or it with its children).

    Its ``TMPDIR`` is a folder of its own, removed when it ended: what the agent leaves in its temp dir (the folder
    Playwright's driver makes for a CDP connection the agent never closed, a killed agent's files) is not left in the
    user's."""
    with scratch_folder("agent") as tmp:
        return await _run(command, {**os.environ, **env, "TMPDIR": str(tmp)}, answer_file, cwd, timeout_s)


async def _run(
    command: list[str], env: dict[str, str], answer_file: Path, cwd: Path | None, timeout_s: float | None
) -> AgentExit:
    try:
        process = await asyncio.create_subprocess_exec(
            *group_dies_with_p2w(command),
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
    except OSError as exc:
        raise UserError(f"--exec {command[0]!r}: cannot start it: {exc.strerror or exc}") from None
    assert process.stdout is not None and process.stderr is not None
    last: list[str] = []
    tail: deque[str] = deque()
    stopped: list[str] = []

    async def read_stdout() -> None:
        assert process.stdout is not None
        try:
            async for raw in process.stdout:
                if line := raw.decode(errors="replace").strip():
                    last[:] = [line]
        except ValueError:  # asyncio's reader: a line beyond ``limit``; its episode ends, the run's others go on
            stopped.append(f"the agent wrote a stdout line longer than {LINE_LIMIT // 2**20} MiB; it was stopped")
            _kill(process)

    async def read_stderr() -> None:
        assert process.stderr is not None
        size = 0
        async for raw in process.stderr:
            tail.append(raw.decode(errors="replace"))
            size += len(tail[-1])
            while size > STDERR_TAIL and len(tail) > 1:
                size -= len(tail.popleft())

    readers = asyncio.gather(read_stdout(), read_stderr())
    try:
        await asyncio.wait_for(_ended(process, readers), timeout_s)
    except BaseException as exc:
        _kill(process)
        readers.cancel()
        readers.add_done_callback(_retrieved)  # its CancelledError is expected, not "never retrieved"
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        if not isinstance(exc, TimeoutError):
            raise
        return AgentExit(None, None, _said(tail, env, answer_file, cwd))
    said = _said(tail, env, answer_file, cwd)
    if stopped:
        return AgentExit(process.returncode, None, said, stopped[0])
    return AgentExit(process.returncode, answer_of(last[0] if last else None, answer_file), said)


def _said(tail: deque[str], env: Mapping[str, str], answer_file: Path, cwd: Path | None) -> str:
    """The stderr tail as an episode keeps it: redacted first, then cut, so that no fragment of a key is left."""
    return redact_agent_text(portable("".join(tail), env, answer_file, cwd))[-STDERR_TAIL:]


def portable(text: str, env: Mapping[str, str], answer_file: Path, cwd: Path | None) -> str:
    """``text`` (the agent's standard error, stored in its episode) with the paths of this machine that p2w-rt gave
    the agent named as the agent knows them: ``$P2W_TASK_FILE``, ``$P2W_ANSWER_FILE``, ``$TMPDIR``, its working
    folder as ``.`` and the home folder as ``~``. A record names no path of the machine that wrote it, and these
    (temporary folders with random names among them) mean nothing on another."""
    places = {
        env.get("P2W_TASK_FILE", ""): "$P2W_TASK_FILE",
        str(answer_file): "$P2W_ANSWER_FILE",
        env.get("TMPDIR", ""): "$TMPDIR",
        str(cwd or Path.cwd()): ".",
        str(Path.home()): "~",
    }
    for path in sorted((p for p in places if len(p.rstrip("/")) > 1), key=len, reverse=True):
        text = re.sub(re.escape(path.rstrip("/")) + r"(?![\w.-])", places[path], text)
    return text


def _retrieved(readers: asyncio.Future[Any]) -> None:
    if not readers.cancelled():
        readers.exception()


async def _ended(process: asyncio.subprocess.Process, readers: Awaitable[object]) -> None:
    """The agent exited; then what it left running in its group is killed (it would hold its output open, and outlive
    its episode), then its output read to the end."""
    await process.wait()
    _kill(process)
    await readers


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
