"""What the Persona2Web runners encode in a trajectory's file name: ``{on|pre|base|no}_{model}_{task_id}.json``.

Both runners squeeze the model name to alphanumerics (``gpt-4.1`` -> ``gpt41``), so the
model tag in a name is a tag, not the exact model id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from schemas import Scheme

SCHEME_PREFIXES: dict[str, Scheme] = {
    "on": "on-demand",
    "pre": "pre-execution",
    "base": "no-history",
    "no": "no-history",
}
_NAME = re.compile(r"^(?P<prefix>on|pre|base|no)_(?P<model>[A-Za-z0-9]+)_(?P<task_id>.+)$")


@dataclass(frozen=True, slots=True)
class FileName:
    scheme: Scheme | None
    model: str | None
    task_id: str | None


def parse_file_name(path: Path) -> FileName:
    """Scheme, model tag and task id from a runner's file name; all None when it does not follow the pattern."""
    match = _NAME.match(Path(path).stem)
    if match is None:
        return FileName(None, None, None)
    return FileName(SCHEME_PREFIXES[match["prefix"]], match["model"], match["task_id"])
