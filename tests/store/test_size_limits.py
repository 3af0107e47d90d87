"""One limit per event and per blob, checked when written, so that everything a store holds can be exported:
an over-limit action is refused by ``import-trajectories`` in one line naming its field, and one just under the
limit travels through ``export`` and ``import`` (docs/design/store.md, "Limits")."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p2w_rt.schemas import NewEvent, Observation, blob_hash
from p2w_runtime.demo.examples import example_paths
from p2w_runtime.store import MAX_BLOB_BYTES, MAX_EVENT_BYTES, EventStore, MemoryEventStore, TooLarge, open_store
from p2w_runtime.store._bundle_lines import line
from p2w_runtime.store._limits import MAX_LINE_BYTES

EPISODE = "pre_gpt41_Jordan_Park_A1"


def p2w_rt(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=db.parent)


def runner_folder(tmp_path: Path, action_chars: int) -> Path:
    """The bundled AgentOccam example files, the second step's action padded to ``action_chars`` characters."""
    examples = example_paths()
    folder = tmp_path / "runner"
    folder.mkdir()
    for source in examples.trajectories("p2w-agentoccam"):
        shutil.copy(source, folder)
    file = folder / f"{EPISODE}.json"
    data = json.loads(file.read_text())
    action = data["trajectory"][1]["action"]
    data["trajectory"][1]["action"] = action + " " + "x" * (action_chars - len(action) - 1)
    file.write_text(json.dumps(data))
    return folder


def import_folder(db: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    examples = example_paths()
    return p2w_rt(
        db, "import-trajectories", "--format", "p2w-agentoccam", "--tasks", str(examples.tasks_dir),
        "--history", str(examples.history_dir), "--label", "big", str(folder),
    )  # fmt: skip


def test_an_action_over_the_event_limit_is_refused_naming_its_field(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    done = import_folder(db, runner_folder(tmp_path, MAX_EVENT_BYTES + 1))
    assert done.returncode == 1, done.stderr
    (said,) = done.stderr.splitlines()
    assert said.startswith("error: 1 bad trajectory file (--skip-bad imports the rest): ")  # found before run.started
    assert "pre_gpt41_Jordan_Park_A1.json: field action.raw makes its action event of step 2 16,777," in said
    assert said.endswith(f" bytes, over the {MAX_EVENT_BYTES // 2**20} MiB limit of an event"), said
    shown = p2w_rt(db, "show", "big", "--json")
    assert "Jordan_Park_A1" not in shown.stdout  # the episode was not written: its first append held the action


def test_an_action_just_under_the_limit_is_stored_exported_and_imported(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    assert import_folder(db, runner_folder(tmp_path, MAX_EVENT_BYTES - 4096)).returncode == 0
    bundle = tmp_path / "big.p2w"
    exported = p2w_rt(db, "export", "big", "-o", str(bundle))
    assert exported.returncode == 0, exported.stderr
    imported = p2w_rt(tmp_path / "other.db", "import", str(bundle))
    assert imported.returncode == 0, imported.stderr
    assert p2w_rt(tmp_path / "other.db", "verify").returncode == 0


def test_the_largest_blob_fits_one_bundle_line() -> None:
    data = b"\xff" * MAX_BLOB_BYTES
    text = line({"blob": blob_hash(data), "data": base64.b64encode(data).decode()})
    assert MAX_LINE_BYTES - 1024 < len(text) <= MAX_LINE_BYTES


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_blob_over_the_limit_is_refused_naming_the_field_that_references_it(
    tmp_path: Path, backend: str
) -> None:
    data = b"\x00" * (MAX_BLOB_BYTES + 1)
    sha = blob_hash(data)
    event = NewEvent(stream="r/t", payload=Observation(step=1, url="http://a.test/", screenshot=sha))

    async def append(store: EventStore) -> None:
        with pytest.raises(TooLarge) as refused:
            await store.append([event], {sha: data})
        assert str(refused.value) == (
            f"observation field observation.screenshot: a blob of {MAX_BLOB_BYTES + 1:,} bytes, over the "
            f"{MAX_BLOB_BYTES / 2**20:.1f} MiB limit of a blob; not written"
        )
        assert [e async for e in store.read_all()] == [] and [h async for h in store.blob_hashes()] == []

    if backend == "memory":
        await append(MemoryEventStore())
    else:
        async with open_store(tmp_path / "p2w.db") as store:
            await append(store)
