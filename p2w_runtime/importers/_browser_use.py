"""Reader for what Persona2Web's Browser-Use runner writes into ``result/{config}/``.

Trajectory (``Agent.save_trajectory``): a JSON list of steps. Memory steps ``{step, url,
step_type: "memory", current_observation, memory_reason, memory_query, retrieved_memory_indices,
memory_answer}``; the runner prepends pre-execution memory steps with ``url: null`` and no
observation or reason. Navigation steps ``{step, url, step_type: "navigation", reason, actions:
[{action, element_index?, text?, url?, query?}]}``; a step without model output has neither
``reason`` nor ``actions``. The task id is only in the file name. A ``done`` action carries the
answer; the runner writes no stop texts of its own, so a file without ``done`` ended at the step
limit or after the agent's consecutive failures, which the file does not tell apart.

Crash record (``{task}.error.json``): ``{task_file, experiment_id, error}``, written instead of a
trajectory when the task raised. Summary (``_summary.json``): a list of such records and of
``{task_file, experiment_id, provider, model, scheme, ..., success, num_steps, final_result}``
for the tasks of the runner's last invocation only (it skips tasks already done).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from p2w_runtime.importers._actions import map_browser_use_action
from p2w_runtime.importers._episode import Header, ImportedEpisode
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._naming import FileName, squeeze_browser_use
from p2w_runtime.importers._read import validated

FORMAT = "p2w-browser-use"
AGENT = "browser-use"
squeeze = squeeze_browser_use


class _Action(BaseModel):
    model_config = ConfigDict(extra="allow")
    action: str
    element_index: int | None = None
    text: str | None = None
    url: str | None = None
    query: str | None = None


class _MemoryStep(BaseModel):
    model_config = ConfigDict(extra="allow")
    step: int
    url: str | None = None
    step_type: Literal["memory"]
    current_observation: str | None = None
    memory_reason: str | None = None
    memory_query: str
    retrieved_memory_indices: Any = Field(default_factory=list)
    memory_answer: str | None = None


class _NavigationStep(BaseModel):
    model_config = ConfigDict(extra="allow")
    step: int
    url: str | None = None
    step_type: Literal["navigation"]
    reason: str | None = None
    actions: list[_Action] = Field(default_factory=list)


_Step = Annotated[_MemoryStep | _NavigationStep, Field(discriminator="step_type")]
BrowserUseFile = list[_Step]
_FILE = TypeAdapter(BrowserUseFile)


class CrashRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    task_file: str
    experiment_id: str | None = None
    error: str


class SummaryRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    task_file: str
    experiment_id: str | None = None
    provider: str | None = None
    model: str | None = None
    scheme: Literal["on-demand", "pre-execution", "no-history"] | None = None
    error: str | None = None


_CRASH = TypeAdapter(CrashRecord)
_SUMMARY = TypeAdapter(list[SummaryRecord])


def parse(path: Path, data: Any) -> BrowserUseFile:
    return validated(_FILE, data, path, "Browser-Use format: a JSON list of steps")


def parse_crash(path: Path, data: Any) -> CrashRecord:
    return validated(_CRASH, data, path, "Browser-Use crash record")


def parse_summary(path: Path, data: Any) -> list[SummaryRecord]:
    return validated(_SUMMARY, data, path, "Browser-Use _summary.json: a list of task records")


def header(path: Path, file: BrowserUseFile, name: FileName) -> Header:
    if not name.task_id:
        raise TrajectoryImportError(
            path, "file name", "does not end with a task id of the task set ({on|pre|no}_{model}_{task id}.json)"
        )
    return Header(task_id=name.task_id, model=name.model, model_is_tag=True, field="file name")


def objective(file: BrowserUseFile) -> str | None:
    """The runner records the task text nowhere but in its task file."""
    return None


def emit(file: BrowserUseFile, builder: ImportedEpisode, *, phase: str, captcha: bool, runner: object = None) -> None:
    answer: str | None = None
    done = False
    final_url: str | None = None
    last_step = 0
    for i, record in enumerate(file):
        step = record.step
        last_step = max(last_step, step)
        final_url = record.url or final_url
        if isinstance(record, _MemoryStep):
            if record.url is not None or record.current_observation:
                builder.observation(step=step, url=record.url, description=record.current_observation)
            builder.memory_access(
                step=step,
                phase=phase,
                query=record.memory_query,
                reason=record.memory_reason,
                indices=record.retrieved_memory_indices,
                answer=record.memory_answer,
                field=f"[{i}].retrieved_memory_indices",
            )
            continue
        if record.url is not None:
            builder.observation(step=step, url=record.url)
        if record.reason:
            builder.rationale(step=step, text=record.reason)
        for action in record.actions:
            raw = action.model_dump(exclude_none=True)
            parsed = map_browser_use_action(raw)
            builder.action(step=step, raw=json.dumps(raw, ensure_ascii=False), parsed=parsed)
            if parsed.name == "stop":
                done, answer = True, parsed.args[0]
    if captcha:
        builder.finished(end_reason="blocked", answer=None, final_url=final_url, steps=last_step, detail=answer)
    elif done:
        builder.finished(end_reason="answered", answer=answer, final_url=final_url, steps=last_step)
    else:
        builder.finished(
            end_reason="no_answer", answer=None, final_url=final_url, steps=last_step, detail="no done action"
        )


def emit_crash(record: CrashRecord, builder: ImportedEpisode) -> None:
    """A crashed task: no steps, ended by ``error`` with the runner's error text."""
    builder.finished(end_reason="error", answer=None, final_url=None, steps=0, detail=record.error)
