"""What the importer tests share: the bundled examples, a fresh store, and ways to import or spoil a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from p2w_rt.schemas import Event
from p2w_runtime.data import find_memory_bank, load_memory_bank
from p2w_runtime.demo.examples import example_paths
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.importers import import_trajectories
from p2w_runtime.store import EventStore
from tests.helpers.paths import DATA

EXAMPLES = example_paths()
AGENTOCCAM = "p2w-agentoccam"
BROWSER_USE = "p2w-browser-use"
RUNNERS = DATA / "runners"
"""Both runners' output folders as they write them (``make_fixtures.py``), for the sample personas."""
AGENTOCCAM_LOGS = RUNNERS / "agentoccam" / "logs"
BROWSER_USE_RESULT = RUNNERS / "browser_use" / "result"


async def import_folder(store: EventStore, fmt: str, folder: Path, **options: Any):
    """Import a runner folder against the sample tasks and histories it was written for."""
    return await import_trajectories(
        store,
        [folder],
        fmt=fmt,  # type: ignore[arg-type]
        tasks_dir=sample_tasks_dir(),
        history_dir=sample_history_dir(),
        label=options.pop("label", folder.name),
        **options,
    )


async def events_of(store: EventStore, stream: str) -> list[Event]:
    return [stored.decode() async for stored in store.read_stream(stream)]


async def run_import(store: EventStore, fmt: str, paths: list[Path] | None = None, **options: Any):
    return await import_trajectories(
        store,
        EXAMPLES.trajectories(fmt) if paths is None else paths,
        fmt=fmt,  # type: ignore[arg-type]
        tasks_dir=options.pop("tasks_dir", EXAMPLES.tasks_dir),
        history_dir=options.pop("history_dir", EXAMPLES.history_dir),
        label=options.pop("label", "demo"),
        **options,
    )


def bank(persona: str):
    return load_memory_bank(find_memory_bank(EXAMPLES.history_dir, persona))


def copy_example(tmp_path: Path, fmt: str, index: int, name: str | None = None) -> tuple[Path, Any]:
    source = EXAMPLES.trajectories(fmt)[index]
    target = tmp_path / (name or source.name)
    shutil.copy(source, target)
    return target, json.loads(source.read_text())


def rewrite(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path
