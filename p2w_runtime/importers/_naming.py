"""What the Persona2Web runners encode in a trajectory's file name: ``{scheme}_{model tag}_{task id}.json``.

The model tag is squeezed, and differently by each runner: AgentOccam removes every
non-alphanumeric (``gpt-4.1`` -> ``gpt41``), Browser-Use removes only ``/``, ``-`` and ``.``
(``gpt_4o`` stays, ``llama3.1:70b`` -> ``llama31:70b``, an empty model gives ``on__TASK``).
Both the tag and the task id may hold underscores, so a name cannot be split on ``_``; the
task id is the longest known task id the name ends with.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from p2w_rt.schemas import Scheme

SCHEME_PREFIXES: dict[str, Scheme] = {
    "on": "on-demand",
    "pre": "pre-execution",
    "base": "no-history",
    "no": "no-history",
}
"""AgentOccam writes ``on|pre|base``, Browser-Use ``on|pre|no``."""
_PREFIX = re.compile(r"^(?P<prefix>on|pre|base|no)_(?P<rest>.*)$", re.S)
ERROR_SUFFIX = ".error.json"
"""Browser-Use's crash record of a task: ``{task file stem}.error.json``."""


@dataclass(frozen=True, slots=True)
class FileName:
    scheme: Scheme | None
    model: str | None
    """The squeezed model tag; ``""`` when the runner's model name was empty."""
    task_id: str | None


def squeeze_agentoccam(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "", model)


def squeeze_browser_use(model: str) -> str:
    return model.replace("/", "").replace("-", "").replace(".", "")


def parse_file_name(path: Path, task_ids: Collection[str]) -> FileName:
    """Scheme, model tag and task id of a runner's file name; all None when no known task id ends it."""
    match = _PREFIX.match(Path(path).name.removesuffix(".json"))
    if match is None:
        return FileName(None, None, None)
    rest = match["rest"]
    ends = [t for t in task_ids if rest.endswith(f"_{t}")]
    if not ends:
        return FileName(None, None, None)
    task_id = max(ends, key=len)
    return FileName(SCHEME_PREFIXES[match["prefix"]], rest[: -len(task_id) - 1], task_id)


def crash_task_id(path: Path) -> str | None:
    """The task id of a Browser-Use ``{task}.error.json``, None for any other name."""
    name = Path(path).name
    return name.removesuffix(ERROR_SUFFIX) if name.endswith(ERROR_SUFFIX) and name != ERROR_SUFFIX else None
