"""Reader for trajectories written by Persona2Web's AgentOccam runner (``agent_runner.py``).

File: ``{task, id, model, type, trajectory: [step...], memory: [access...]}``. ``log_step``
writes each step as ``objective``, ``url``, the env status (``done``, ``reward``, ``success``,
``num_actions``), ``plan``, ``reason`` and ``action`` (plus ``actor_{i}:...`` keys when several
actors ran). It never writes ``observation_description`` or ``interaction_history_summary``:
it keeps the underscore names but the actor's keys have spaces, so both are always dropped.
Memory accesses carry ``Memory Query``, ``Retrieved memory index`` and ``Memory Retrieved``
but no step, so they are written first, in file order, with ``step=None``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from p2w_runtime.actions import ACTION_NAMES
from p2w_runtime.importers._actions import AGENTOCCAM_ONLY_ACTIONS, parse_agentoccam_action
from p2w_runtime.importers._episode import Header, ImportedEpisode
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._naming import FileName, squeeze_agentoccam
from p2w_runtime.importers._read import validated
from schemas import EndReason

FORMAT = "p2w-agentoccam"
AGENT = "agentoccam"
squeeze = squeeze_agentoccam


class _Step(BaseModel):
    model_config = ConfigDict(extra="allow")
    url: str | None = None
    plan: str | None = None
    reason: str | None = None
    action: str
    done: bool | None = None


class _MemoryAccess(BaseModel):
    model_config = ConfigDict(extra="allow")
    query: str = Field(alias="Memory Query")
    indices: Any = Field(default_factory=list, alias="Retrieved memory index")
    answer: str | None = Field(default=None, alias="Memory Retrieved")


class AgentOccamFile(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str | None = None
    model: str | None = None
    trajectory: list[_Step]
    memory: list[_MemoryAccess] | None = None


_FILE = TypeAdapter(AgentOccamFile)

RUNNER_STOPS: dict[str, EndReason] = {
    "too many invalid actions attempted": "parse_failures",
    "too many invalid action candidates attempted": "parse_failures",
}
"""``stop [...]`` texts the actor writes itself after three invalid actions (``predict_action``)."""
RUNNER_STOP_PREFIXES: tuple[tuple[str, EndReason], ...] = (
    ("trajectory failed:", "max_steps"),
    ("early stop:", "early_stop"),
)
"""``env.py``'s step-limit stop and WebArena ``run.py``'s early stops, which AgentOccam inherits."""
CAPTCHA_MARKERS = ("captcha", "automatically stopped", "error condition detected")
"""What ``agent_runner.py`` looks for in a final stop to file the trajectory under ``captcha_stopped/``."""

_SPLIT = re.compile(rf"\n(?=\s*(?:{'|'.join([*ACTION_NAMES, *AGENTOCCAM_ONLY_ACTIONS])})\b)")


def split_actions(text: str) -> list[str]:
    """One step's action string as the actions it holds (``note [x]\\nstop [y]``), split like the actor does."""
    return [part.strip() for part in _SPLIT.split(text.strip())] or [text]


def parse(path: Path, data: Any) -> AgentOccamFile:
    return validated(_FILE, data, path, "AgentOccam format")


def header(path: Path, file: AgentOccamFile, name: FileName) -> Header:
    """Task id from ``id`` (must agree with the file name when both exist), model from ``model``."""
    if file.id and name.task_id and file.id != name.task_id:
        raise TrajectoryImportError(path, "id", f"{file.id!r} disagrees with the file name's task id {name.task_id!r}")
    task_id = file.id or name.task_id
    if not task_id:
        raise TrajectoryImportError(path, "id", "missing, and the file name does not end with a known task id")
    if file.model:
        return Header(task_id=task_id, model=file.model, model_is_tag=False, field="id")
    return Header(task_id=task_id, model=name.model, model_is_tag=True, field="id")


def emit(file: AgentOccamFile, builder: ImportedEpisode, *, phase: str, captcha: bool) -> None:
    for i, access in enumerate(file.memory or []):
        builder.memory_access(
            step=None,
            phase=phase,
            query=access.query,
            reason=None,
            indices=access.indices,
            answer=access.answer,
            field=f"memory[{i}].Retrieved memory index",
        )
    last_plan: str | None = None
    last_url: str | None = None
    for number, step in enumerate(file.trajectory, start=1):
        last_url = step.url or last_url
        builder.observation(step=number, url=step.url)
        if step.plan and step.plan != last_plan:
            builder.rationale(step=number, text=f"Plan: {step.plan}")
        last_plan = step.plan or last_plan
        if step.reason:
            builder.rationale(step=number, text=step.reason)
        for raw in split_actions(step.action):
            parsed, error = parse_agentoccam_action(raw)
            builder.action(step=number, raw=raw, parsed=parsed, error=error)
    _finish(builder, file.trajectory, last_url, captcha=captcha)


def end_of_stop(text: str, *, captcha: bool = False) -> EndReason:
    """End reason of a final ``stop [text]``: texts the runner writes itself are not answers."""
    lowered = text.strip().lower()
    if captcha or any(marker in lowered for marker in CAPTCHA_MARKERS):
        return "blocked"
    if lowered in RUNNER_STOPS:
        return RUNNER_STOPS[lowered]
    for prefix, reason in RUNNER_STOP_PREFIXES:
        if lowered.startswith(prefix):
            return reason
    return "answered"


def _finish(builder: ImportedEpisode, steps: list[_Step], final_url: str | None, *, captcha: bool) -> None:
    final = parse_agentoccam_action(split_actions(steps[-1].action)[-1])[0] if steps else None
    if final is None or final.name != "stop":
        # The runner's loop ends only on stop or on env.py's step limit (memory accesses count too).
        detail = "stopped by the runner's step limit: no stop action" + (" (empty trajectory)" if not steps else "")
        reason: EndReason = "blocked" if captcha else "max_steps"
        builder.finished(end_reason=reason, answer=None, final_url=final_url, steps=len(steps), detail=detail)
        return
    text = final.args[0] if final.args else ""
    reason = end_of_stop(text, captcha=captcha)
    builder.finished(
        end_reason=reason,
        answer=text if reason == "answered" else None,
        final_url=final_url,
        steps=len(steps),
        detail=None if reason == "answered" else text,
    )
