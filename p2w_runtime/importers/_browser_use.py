"""Reader for what Persona2Web's Browser-Use runner writes into ``result/{config}/``.

Trajectory (``Agent.save_trajectory``): a JSON list of steps. Memory steps ``{step, url,
step_type: "memory", current_observation, memory_reason, memory_query, retrieved_memory_indices,
memory_answer}``; the runner prepends pre-execution memory steps with ``url: null`` and no
observation or reason. Navigation steps ``{step, url, step_type: "navigation", reason, actions:
[{action, element_index?, text?, url?, query?}]}``; a step without model output has neither
``reason`` nor ``actions``. The task id is only in the file name. A ``done`` action carries the
answer; its ``success`` flag is not in the step (the runner keeps only ``text``, ``url``, ``query`` of an
action) but in ``_summary.json`` (``success: false`` is kept in the end's detail). A step whose model call failed
repeats the previous step's output (``_failed_steps``): not carried out. A file without ``done`` whose last
``max_failures`` (3) steps failed stopped on consecutive failures (``error``); otherwise at the step limit, which the
file does not state (``no_answer``).

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

from p2w_rt.schemas import NOT_CARRIED_OUT
from p2w_runtime.importers._actions import map_browser_use_action
from p2w_runtime.importers._agentoccam_log import RunnerLog
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


class _StepBase(BaseModel):
    """What every step of the file has; ``step_type`` says which of the two it is."""

    model_config = ConfigDict(extra="allow")
    step: int
    url: str | None = None


class _MemoryStep(_StepBase):
    step_type: Literal["memory"]
    current_observation: str | None = None
    memory_reason: str | None = None
    memory_query: str
    retrieved_memory_indices: Any = Field(default_factory=list)
    memory_answer: str | None = None


class _NavigationStep(_StepBase):
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
    success: bool | None = None
    """``history.is_successful()``: the ``success`` of the agent's last ``done`` (None without one)."""


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


MAX_FAILURES = 3
"""``Agent(max_failures=3)``, the default the runner keeps: the run stops after this many failed steps in a row."""


def _output(record: _NavigationStep) -> tuple[Any, ...] | None:
    """A navigation step's model output as the file records it (None: no model output)."""
    if not record.reason and not record.actions:
        return None
    return record.reason, tuple(tuple(sorted(a.model_dump(exclude_none=True).items())) for a in record.actions)


def _failed_steps(file: BrowserUseFile) -> set[int]:
    """Navigation steps whose model call failed: the runner writes the previous step's output again.

    ``Agent.step`` keeps ``state.last_model_output`` when ``_get_next_action`` raises (it clears it only on a memory
    step), and ``_finalize`` logs the step with it (``browser_use/agent/service.py``, around line 1019): the step
    repeats, word for word, the output of the navigation step before it, with no memory step between. Nothing of it
    ran. A model repeating itself exactly would read the same; the runner's files hold no other trace of the failure.
    """
    failed: set[int] = set()
    previous: tuple[Any, ...] | None = None
    for record in file:
        if isinstance(record, _MemoryStep):
            previous = None
            continue
        output = _output(record)
        if output is not None and output == previous:
            failed.add(record.step)
        previous = output
    return failed


def _trailing(file: BrowserUseFile, failed: set[int]) -> int:
    """How many of the last navigation steps failed in a row."""
    count = 0
    for record in reversed([r for r in file if isinstance(r, _NavigationStep)]):
        if record.step not in failed:
            break
        count += 1
    return count


def emit(
    file: BrowserUseFile, builder: ImportedEpisode, *, phase: str, captcha: bool, runner: RunnerLog | None = None
) -> None:
    answer: str | None = None
    done = False
    final_url: str | None = None
    last_step = 0
    failed = _failed_steps(file)
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
        if step in failed:
            why = f"{NOT_CARRIED_OUT}: the step's model call failed; the runner wrote the previous step's output again"
            for action in record.actions:
                raw = action.model_dump(exclude_none=True)
                parsed = map_browser_use_action(raw)
                raw_text = json.dumps(raw, ensure_ascii=False)
                builder.action(step=step, raw=raw_text, parsed=parsed, status="blocked", error=why)
            builder.notes.append(f"step {step} repeats step {step - 1}'s output: its model call failed, not run")
            continue
        if record.reason:
            builder.rationale(step=step, text=record.reason)
        for action in record.actions:
            raw = action.model_dump(exclude_none=True)
            parsed = map_browser_use_action(raw)
            builder.action(step=step, raw=json.dumps(raw, ensure_ascii=False), parsed=parsed)
            if parsed.name == "stop":
                done, answer = True, parsed.args[0]
    own = runner.success.get(builder.task_id) if runner is not None else None
    trailing = _trailing(file, failed)
    if captcha:
        builder.finished(end_reason="blocked", answer=None, final_url=final_url, steps=last_step, detail=answer)
    elif done:
        detail = "the agent's done reported success: false (_summary.json)" if own is False else None
        builder.finished(end_reason="answered", answer=answer, final_url=final_url, steps=last_step, detail=detail)
    elif trailing >= MAX_FAILURES:
        detail = f"stopped after {trailing} consecutive failed steps (Agent max_failures {MAX_FAILURES})"
        builder.finished(end_reason="error", answer=None, final_url=final_url, steps=last_step, detail=detail)
    else:
        builder.finished(
            end_reason="no_answer", answer=None, final_url=final_url, steps=last_step, detail="no done action"
        )


def emit_crash(record: CrashRecord, builder: ImportedEpisode) -> None:
    """A crashed task: no steps, ended by ``error`` with the runner's error text."""
    builder.finished(end_reason="error", answer=None, final_url=None, steps=0, detail=record.error)
