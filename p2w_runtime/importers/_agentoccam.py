"""Reader for trajectories written by Persona2Web's AgentOccam runner.

File: ``{task, id, model, type, trajectory: [step...], memory: [access...]}``. Each step
carries ``url``, ``plan``, ``observation_description``, ``reason`` and ``action``; memory
accesses carry ``Memory Query``, ``Retrieved memory index`` and ``Memory Retrieved`` but no
step, so they are written first, in file order, with ``step=None``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from p2w_runtime.importers._actions import parse_agentoccam_action
from p2w_runtime.importers._episode import EpisodeBuilder, Header
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._naming import FileName
from schemas import EndReason

FORMAT = "p2w-agentoccam"
AGENT = "agentoccam"

_FAILURE_PREFIXES: tuple[tuple[str, EndReason], ...] = (
    ("trajectory failed:", "max_steps"),
    ("early stop:", "early_stop"),
    ("error:", "error"),
)
_BLOCKED_MARKERS = ("captcha", "automatically stopped", "error condition detected")
"""What the runner looks for to file a trajectory under ``captcha_stopped/``."""


def end_of_stop(answer: str) -> EndReason:
    """End reason of a final ``stop [...]``: runner-written failure messages are not answers."""
    lowered = answer.strip().lower()
    for prefix, reason in _FAILURE_PREFIXES:
        if lowered.startswith(prefix):
            return reason
    if any(marker in lowered for marker in _BLOCKED_MARKERS):
        return "blocked"
    return "answered"


def _opt_str(builder: EpisodeBuilder, record: dict[str, Any], key: str, field: str) -> str | None:
    value = record.get(key)
    if value is None or isinstance(value, str):
        return value
    raise builder.fail(f"{field}.{key}", f"expected a string, got {type(value).__name__}")


def _top_level(path: Path, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise TrajectoryImportError(path, None, f"expected a JSON object (AgentOccam format), got {kind}")
    if not isinstance(data.get("trajectory"), list):
        raise TrajectoryImportError(path, "trajectory", "missing or not a list")
    return data


def header(path: Path, data: Any, name: FileName) -> Header:
    """Task id from ``id`` (must agree with the file name when both exist), model from ``model``."""
    record = _top_level(path, data)
    task_id = record.get("id")
    if task_id is not None and not isinstance(task_id, str):
        raise TrajectoryImportError(path, "id", f"expected a string, got {type(task_id).__name__}")
    if task_id and name.task_id and task_id != name.task_id:
        raise TrajectoryImportError(path, "id", f"{task_id!r} disagrees with the file name's task id {name.task_id!r}")
    task_id = task_id or name.task_id
    if not task_id:
        raise TrajectoryImportError(path, "id", "missing, and the file name is not {on|pre|base|no}_{model}_{task_id}")
    model = record.get("model")
    return Header(task_id=task_id, model=model if isinstance(model, str) and model else name.model, field="id")


def emit(data: Any, builder: EpisodeBuilder, *, phase: str) -> None:
    record = _top_level(builder.path, data)
    memory = record.get("memory") or []
    if not isinstance(memory, list):
        raise builder.fail("memory", f"expected a list, got {type(memory).__name__}")
    for i, access in enumerate(memory):
        field = f"memory[{i}]"
        if not isinstance(access, dict):
            raise builder.fail(field, f"expected an object, got {type(access).__name__}")
        query = _opt_str(builder, access, "Memory Query", field)
        if query is None:
            raise builder.fail(f"{field}.Memory Query", "missing")
        builder.memory_access(
            step=None,
            phase=phase,
            query=query,
            reason=None,
            indices=access.get("Retrieved memory index", []),
            answer=_opt_str(builder, access, "Memory Retrieved", field),
            field=f"{field}.Retrieved memory index",
        )
    steps: list[Any] = record["trajectory"]
    last_plan: str | None = None
    last_url: str | None = None
    for number, step in enumerate(steps, start=1):
        field = f"trajectory[{number - 1}]"
        if not isinstance(step, dict):
            raise builder.fail(field, f"expected an object, got {type(step).__name__}")
        last_url = _opt_str(builder, step, "url", field) or last_url
        builder.observation(
            step=number, url=step.get("url"), description=_opt_str(builder, step, "observation_description", field)
        )
        plan = _opt_str(builder, step, "plan", field)
        if plan and plan != last_plan:
            builder.rationale(step=number, text=f"Plan: {plan}")
        last_plan = plan or last_plan
        reason = _opt_str(builder, step, "reason", field)
        if reason:
            builder.rationale(step=number, text=reason)
        raw = _opt_str(builder, step, "action", field)
        if raw is None:
            raise builder.fail(f"{field}.action", "missing")
        parsed, error = parse_agentoccam_action(raw)
        builder.action(step=number, raw=raw, parsed=parsed, error=error)
    _finish(builder, steps, last_url)


def _finish(builder: EpisodeBuilder, steps: list[Any], final_url: str | None) -> None:
    final = parse_agentoccam_action(steps[-1].get("action", ""))[0] if steps else None
    if final is None or final.name != "stop":
        detail = "empty trajectory" if not steps else "the last action is not stop"
        builder.finished(end_reason="no_answer", answer=None, final_url=final_url, steps=len(steps), detail=detail)
        return
    text = final.args[0] if final.args else ""
    reason = end_of_stop(text)
    builder.finished(
        end_reason=reason,
        answer=text if reason == "answered" else None,
        final_url=final_url,
        steps=len(steps),
        detail=None if reason == "answered" else text,
    )
