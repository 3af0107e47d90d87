"""Reader for trajectories written by Persona2Web's Browser-Use runner.

File: a JSON list of steps. Memory steps ``{step, url, step_type: "memory",
current_observation, memory_reason, memory_query, retrieved_memory_indices, memory_answer}``
(pre-execution memory steps have ``url: null`` and no observation or reason); navigation
steps ``{step, url, step_type: "navigation", reason, actions: [{action, element_index?,
text?, url?, query?}]}``. The task id is only in the file name. A ``done`` action carries
the answer; a file without one ended without an answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from p2w_runtime.importers._actions import map_browser_use_action
from p2w_runtime.importers._episode import EpisodeBuilder, Header
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._naming import FileName

FORMAT = "p2w-browser-use"
AGENT = "browser-use"


def header(path: Path, data: Any, name: FileName) -> Header:
    if not isinstance(data, list):
        kind = type(data).__name__
        raise TrajectoryImportError(path, None, f"expected a JSON list of steps (Browser-Use format), got {kind}")
    if not name.task_id:
        raise TrajectoryImportError(path, "file name", "not {on|pre|base|no}_{model}_{task_id}.json, so no task id")
    return Header(task_id=name.task_id, model=name.model, field="file name")


def _opt_str(builder: EpisodeBuilder, record: dict[str, Any], key: str, field: str) -> str | None:
    value = record.get(key)
    if value is None or isinstance(value, str):
        return value
    raise builder.fail(f"{field}.{key}", f"expected a string, got {type(value).__name__}")


def _step_number(builder: EpisodeBuilder, record: dict[str, Any], field: str, position: int) -> int:
    value = record.get("step", position)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise builder.fail(f"{field}.step", f"expected an integer, got {value!r}")


def emit(data: Any, builder: EpisodeBuilder, *, phase: str) -> None:
    answer: str | None = None
    done = False
    final_url: str | None = None
    last_step = 0
    for position, record in enumerate(data, start=1):
        field = f"[{position - 1}]"
        if not isinstance(record, dict):
            raise builder.fail(field, f"expected an object, got {type(record).__name__}")
        step = _step_number(builder, record, field, position)
        last_step = max(last_step, step)
        url = _opt_str(builder, record, "url", field)
        final_url = url or final_url
        kind = record.get("step_type")
        if kind == "memory":
            observed = _opt_str(builder, record, "current_observation", field)
            if url is not None or observed:
                builder.observation(step=step, url=url, description=observed)
            query = _opt_str(builder, record, "memory_query", field)
            if query is None:
                raise builder.fail(f"{field}.memory_query", "missing")
            builder.memory_access(
                step=step,
                phase=phase,
                query=query,
                reason=_opt_str(builder, record, "memory_reason", field),
                indices=record.get("retrieved_memory_indices", []),
                answer=_opt_str(builder, record, "memory_answer", field),
                field=f"{field}.retrieved_memory_indices",
            )
        elif kind == "navigation":
            if url is not None:
                builder.observation(step=step, url=url)
            reason = _opt_str(builder, record, "reason", field)
            if reason:
                builder.rationale(step=step, text=reason)
            actions = record.get("actions", [])
            if not isinstance(actions, list):
                raise builder.fail(f"{field}.actions", f"expected a list, got {type(actions).__name__}")
            for index, action in enumerate(actions):
                if not isinstance(action, dict) or not isinstance(action.get("action"), str):
                    raise builder.fail(f"{field}.actions[{index}]", "expected an object with an 'action' name")
                parsed = map_browser_use_action(action)
                builder.action(step=step, raw=json.dumps(action, ensure_ascii=False), parsed=parsed)
                if parsed.name == "stop":
                    done, answer = True, parsed.args[0]
        else:
            raise builder.fail(f"{field}.step_type", f"expected 'memory' or 'navigation', got {kind!r}")
    if done:
        builder.finished(end_reason="answered", answer=answer, final_url=final_url, steps=last_step)
    else:
        builder.finished(
            end_reason="no_answer", answer=None, final_url=final_url, steps=last_step, detail="no done action"
        )
