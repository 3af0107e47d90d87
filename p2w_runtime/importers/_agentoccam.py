"""Reader for trajectories written by Persona2Web's AgentOccam runner (``agent_runner.py``).

File: ``{task, id, model, type, trajectory: [step...], memory: [access...]}``. ``log_step``
writes each step as ``objective``, ``url``, the env status (``done``, ``reward``, ``success``,
``num_actions``), ``plan``, ``reason`` and ``action`` (plus ``actor_{i}:...`` keys when several
actors ran). It never writes ``observation_description`` or ``interaction_history_summary``:
it keeps the underscore names but the actor's keys have spaces, so both are always dropped.
Memory accesses carry ``Memory Query``, ``Retrieved memory index`` and ``Memory Retrieved``
but no step: ``num_actions`` places them (``_agentoccam_steps``), each as its own step the way our
agent records a ``memory_access`` (observation, action, history.query -> retrieval -> answer).
``plan`` is ``get_active_plan()`` read after ``finalize_action`` applied a ``branch`` / ``prune``: the
plan after the step, written after its actions when it changed. ``branch`` / ``prune`` are planning
actions (``p2w_runtime.domain.trajectory`` counts them as non-browser actions, like ``note`` and ``memory_access``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from p2w_rt.schemas import NOT_CARRIED_OUT, EndReason, ParsedAction
from p2w_runtime.actions import ACTION_NAMES
from p2w_runtime.errors import clip
from p2w_runtime.importers._actions import AGENTOCCAM_ONLY_ACTIONS, parse_agentoccam_action
from p2w_runtime.importers._agentoccam_log import RunnerLog
from p2w_runtime.importers._agentoccam_steps import Placement, Slot, place_actions
from p2w_runtime.importers._episode import Header, ImportedEpisode
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._naming import FileName, squeeze_agentoccam
from p2w_runtime.importers._read import validated

FORMAT = "p2w-agentoccam"
AGENT = "agentoccam"
squeeze = squeeze_agentoccam


class _Step(BaseModel):
    model_config = ConfigDict(extra="allow")
    objective: str | None = None
    url: str | None = None
    plan: str | None = None
    reason: str | None = None
    action: str
    done: bool | None = None
    num_actions: int | None = None


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


def objective(file: AgentOccamFile) -> str | None:
    """``log_step``'s ``objective``: ``self.objective`` of the agent, the same on every step."""
    return next((s.objective for s in file.trajectory if s.objective), None)


def root_plan(goal: str | None) -> str | None:
    """``init_actor``'s plan tree root, the plan in force before the first step: ``[0] Find the solution to "..."``."""
    return f'[0] Find the solution to "{goal}"' if goal is not None else None


def emit(
    file: AgentOccamFile,
    builder: ImportedEpisode,
    *,
    phase: str,
    captcha: bool,
    runner: RunnerLog | None = None,
) -> None:
    runner = runner or RunnerLog()
    steps = file.trajectory
    split = [split_actions(s.action) for s in steps]
    stops = [any(_name(raw) == "stop" for raw in actions) for actions in split]
    placement = place_actions(
        builder.path,
        steps,
        len(file.memory or []),
        on_demand=phase == "on-demand",
        max_steps=runner.max_steps,
        summary_actions=runner.num_actions.get(builder.task_id),
        stops=stops,
    )
    if placement.unaccounted:
        numbers = ", ".join(map(str, placement.unaccounted))
        builder.note(
            f"{len(placement.unaccounted)} action(s) counted by the runner but not in the file (num_actions {numbers}):"
            " memory accesses that found nothing (the runner writes no entry for them)"
        )
    if placement.unplaced:
        builder.note(
            f"{placement.unplaced} memory access(es) with no unlogged action to stand in (num_actions shows no gap"
            " for them): recorded before the first step, without a step number"
        )
    in_force = root_plan(objective(file))
    last_url: str | None = None
    for i, slot in enumerate(placement.slots):
        if slot.access is not None:
            access = (file.memory or [])[slot.access]
            field = f"memory[{slot.access}].Retrieved memory index"
            if slot.number == 0:
                builder.memory_access(step=None, phase=phase, query=access.query, reason=None,
                                      indices=access.indices, answer=access.answer, field=field)  # fmt: skip
                continue
            url = _url_at(placement.slots[i:], steps) or last_url
            builder.observation(step=slot.number, url=url)
            raw = f"memory_access [{access.query}]"
            builder.action(step=slot.number, raw=raw, parsed=ParsedAction(name="memory_access", args=[access.query]),
                           **_status(slot, runner))  # fmt: skip
            builder.memory_access(step=slot.number, phase=phase, query=access.query, reason=None,
                                  indices=access.indices, answer=access.answer, field=field)  # fmt: skip
            continue
        assert slot.step is not None
        step = steps[slot.step]
        last_url = step.url or last_url
        builder.observation(step=slot.number, url=step.url)
        if step.reason:
            builder.rationale(step=slot.number, text=step.reason)
        for raw in split[slot.step]:
            parsed, error = parse_agentoccam_action(raw)
            if error:
                builder.action(step=slot.number, raw=raw, parsed=parsed, status="invalid", error=error)
            else:
                builder.action(step=slot.number, raw=raw, parsed=parsed, **_status(slot, runner))
        if step.plan and step.plan != in_force:
            builder.rationale(step=slot.number, text=f"Plan after this step: {step.plan}")
            in_force = step.plan
        if not slot.executed:
            builder.note(
                f"step {slot.number} ({clip(step.action, 80)!r}) was logged but not carried out: " + _why(runner)
            )
    _finish(builder, steps, placement, last_url, captcha=captcha, runner=runner)


def _name(raw: str) -> str | None:
    parsed, _ = parse_agentoccam_action(raw)
    return parsed.name if parsed else None


def _why(runner: RunnerLog) -> str:
    if runner.max_steps is not None:
        return f"env.step stops past max_steps {runner.max_steps}"
    return "env.step stopped at its step limit (done without a stop)"


def _status(slot: Slot, runner: RunnerLog) -> dict[str, Any]:
    if slot.executed:
        return {"status": "executed"}
    return {"status": "blocked", "error": f"{NOT_CARRIED_OUT}: {_why(runner)}"}


def _url_at(slots: Sequence[Slot], steps: Sequence[_Step]) -> str | None:
    """A memory access's page: the next logged step's ``url`` (the page that step was chosen on)."""
    for slot in slots:
        if slot.step is not None:
            return steps[slot.step].url
    return None


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


def _finish(
    builder: ImportedEpisode,
    steps: list[_Step],
    placement: Placement,
    final_url: str | None,
    *,
    captcha: bool,
    runner: RunnerLog,
) -> None:
    logged = [slot for slot in placement.slots if slot.step is not None]
    last = logged[-1] if logged else None
    carried = placement.carried_out
    final = parse_agentoccam_action(split_actions(steps[-1].action)[-1])[0] if steps else None
    if last is not None and not last.executed:
        detail = f"stopped by the runner's step limit: step {last.number} logged but not carried out ({_why(runner)})"
        builder.finished(end_reason="blocked" if captcha else "max_steps", answer=None, final_url=final_url,
                         steps=carried, detail=detail)  # fmt: skip
        return
    if final is None or final.name != "stop":
        # The runner's loop ends only on stop or on env.py's step limit (memory accesses count too).
        detail = "stopped by the runner's step limit: no stop action" + (" (empty trajectory)" if not steps else "")
        reason: EndReason = "blocked" if captcha else "max_steps"
        builder.finished(end_reason=reason, answer=None, final_url=final_url, steps=carried, detail=detail)
        return
    text = final.args[0] if final.args else ""
    reason = end_of_stop(text, captcha=captcha)
    builder.finished(
        end_reason=reason,
        answer=text if reason == "answered" else None,
        final_url=final_url,
        steps=carried,
        detail=None if reason == "answered" else text,
    )
