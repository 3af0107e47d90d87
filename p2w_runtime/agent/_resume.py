"""What ``record --resume`` continues: the selection and settings read back from ``run.started``.

A resumed run is the same run: the same tasks (the ids selected when it started, whatever
``--level`` / ``--limit`` / ``--task`` chose then), the same model and agent settings. Options
that would change what is measured are refused when they differ from the recorded ones; options
that only change how the recorder runs may differ (``RESUME_MAY_CHANGE``). One process at a time records a run, first
or resumed (``p2w_runtime.domain.holding_run``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.agent._request import RecordRequest
from p2w_runtime.agent._run import AGENT_NAME
from p2w_runtime.data import TaskSet
from p2w_runtime.domain import RunInfo
from p2w_runtime.errors import UserError

RESUME_MAY_CHANGE = (
    "--concurrency",
    "--chromium",
    "--cache-dir",
    "--prices",
    "--max-retries",
    "--llm-timeout",
    "--timeout",
    "--base-url",
    "--api-key",
)
"""How the recorder runs, not what it measures: a resume may change these (the endpoint may have moved)."""
COMMAND_DIGEST = "command_digest"
"""The key of ``run.started.config`` holding the digest of ``record --exec``'s command (never the command)."""


def selection_config(request: RecordRequest, task_ids: list[str]) -> dict[str, Any]:
    """What ``run.started`` keeps of the selection, so that a resume records exactly these tasks."""
    return {"level": request.level, "task_ids": list(request.task_ids), "limit": request.limit, "tasks": task_ids}


def resumed_request(run: RunInfo, request: RecordRequest) -> RecordRequest:
    """``request`` with the run's recorded selection and settings; one ``UserError`` naming every option
    given now that conflicts with them, or the other agent that recorded the run."""
    check_resume_options(run, request)
    started = run.started
    config = started.config
    tasks = config.tasks
    return replace(
        request,
        tasks_dir=request.tasks_dir if "--tasks" in request.given else _path(config.tasks_dir) or request.tasks_dir,
        history_dir=_path(config.history_dir) or request.history_dir,
        profiles=request.profiles if "--profiles" in request.given else _path(config.profiles),
        start_url=config.start_url or request.start_url,
        model=started.backbone_model,
        label=run.label,
        config=AgentConfig.recorded(config) or request.config,
        embedder=None if config.embedder == "default" else config.embedder,
        # runs recorded before the selection was kept: the options given now select, as they always did
        task_ids=tuple(tasks) if tasks is not None else request.task_ids,
        level=None if tasks is not None else config.level if config.given("level") else request.level,
        limit=None if tasks is not None else request.limit,
    )


def check_resume_options(
    run: RunInfo, request: RecordRequest, *, agent: str = AGENT_NAME, command_digest: str | None = None
) -> None:
    """One ``UserError`` naming every option given now that differs from what ``run`` recorded, the other agent
    (``agent``: the one resuming) or, for ``record --exec``, another command (``command_digest``) than the one that
    recorded it; or saying the run was imported. The own agent's resume and ``record --exec``'s check the same."""
    started = run.started
    if started.source != "recorded":
        raise UserError(f"run {run.label!r} was imported, not recorded; only recorded runs can be resumed")
    recorded = _recorded(run)
    asked = _asked(request)
    conflicts = [
        f"{flag} {_show(asked[flag])} (recorded: {_show(recorded[flag])})"
        for flag in sorted(request.given & recorded.keys())
        if asked[flag] != recorded[flag]
    ]
    other_agent = started.agent != agent
    if other_agent:
        conflicts.insert(0, f"agent {agent!r} (recorded: {started.agent!r})")
    elif command_digest is not None and recorded_command(run) not in (None, command_digest):
        conflicts.insert(0, f"--exec: other arguments than the command that recorded it ({agent})")
    if conflicts:
        redo = "resume it with the agent that recorded it" if other_agent else "drop them to resume"
        raise UserError(
            f"run {run.label!r} was recorded with other settings: {', '.join(conflicts)}; {redo} "
            f"(a resume may change only {', '.join(RESUME_MAY_CHANGE)}), or record a new run under another --label"
        )


def recorded_command(run: RunInfo) -> str | None:
    """The digest of the command that recorded an ``exec:`` run (``COMMAND_DIGEST`` in its config); None before
    runs kept it."""
    value = run.started.config.extra(COMMAND_DIGEST)
    return value if isinstance(value, str) else None


def check_dataset(run: RunInfo, dataset: TaskSet) -> None:
    """The task files may move, but their content must be what the run was recorded on."""
    if run.started.dataset_hash != dataset.content_hash:
        raise UserError(
            f"run {run.label!r} was recorded on other task files (dataset {run.started.dataset_id}, "
            f"given {dataset.dataset_id})"
        )


def _recorded(run: RunInfo) -> dict[str, Any]:
    """Option flag -> the value the run was started with; options a run does not record are left out."""
    started, config = run.started, run.started.config
    recorded: dict[str, Any] = {"--model": started.backbone_model, "--scheme": started.scheme, "--label": run.label}
    names = {
        "--max-steps": "max_steps",
        "--page-timeout": "page_timeout_s",
        "--history": "history_dir",
        "--embedder": "embedder",
        "--level": "level",
        "--task": "task_ids",
        "--limit": "limit",
        "--start-url": "start_url",
        "--har": "har_bodies",
    }
    recorded.update({flag: getattr(config, key) for flag, key in names.items() if config.given(key)})
    return recorded


def _asked(request: RecordRequest) -> dict[str, Any]:
    return {
        "--model": request.model,
        "--scheme": request.config.scheme,
        "--label": request.label,
        "--max-steps": request.config.max_steps,
        "--page-timeout": request.config.page_timeout_s,
        "--history": str(request.history_dir),
        "--embedder": request.embedder or "default",
        "--level": request.level,
        "--task": list(request.task_ids),
        "--limit": request.limit,
        "--start-url": request.start_url,
        "--har": request.config.har_bodies,
    }


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _show(value: Any) -> str:
    if isinstance(value, bool):  # a flag: given or not
        return "on" if value else "off"
    if value is None or value == []:
        return "none"
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)
