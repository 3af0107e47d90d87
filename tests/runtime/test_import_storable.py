"""A runner file whose events the store would refuse is a bad file, found with the other checks before anything is
written: an event over the store's size limit, an integer beyond 64 bits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from p2w_runtime.importers import BadTrajectoryFiles
from p2w_runtime.store import MAX_EVENT_BYTES, EventStore
from tests.helpers.import_support import BROWSER_USE, BROWSER_USE_RESULT, import_folder


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "on-demand_gpt41_1"
    shutil.copytree(BROWSER_USE_RESULT / folder.name, folder)
    return folder


def _spoil(path: Path, edit: str, to: str) -> Path:
    text = path.read_text(encoding="utf-8")
    assert edit in text
    path.write_text(text.replace(edit, to, 1), encoding="utf-8")
    return path


async def _only_bad(store: EventStore, folder: Path) -> str:
    with pytest.raises(BadTrajectoryFiles) as caught:
        await import_folder(store, BROWSER_USE, folder)
    [error] = caught.value.errors
    assert await store.count() == (0, 0), "no run.started, no episode: the file was checked first"
    return str(error)


async def test_a_done_answer_over_the_event_limit_is_a_bad_file_that_skip_bad_skips(
    tmp_path: Path, store: EventStore
) -> None:
    folder = _folder(tmp_path)
    answer = "Booked the 6:30 pm class."
    # the raw action and the parsed stop both hold the answer: half the limit makes the event too large
    spoiled = _spoil(folder / "on_gpt41_Priya_Raman_C1.json", answer, "x" * (MAX_EVENT_BYTES // 2 + 1))
    message = await _only_bad(store, folder)
    assert message.startswith(f"{spoiled}: field action.")
    assert message.endswith(" bytes, over the 16 MiB limit of an event")
    assert "makes its action event of step 1 " in message
    report = await import_folder(store, BROWSER_USE, folder, skip_bad=True)
    assert sorted(report.imported) == ["Lena_Fischer_B1", "Marcus_Okafor_A1", "Tomas_Reyes_B1"]
    assert [e.path for e in report.bad] == [spoiled]


async def test_a_crash_record_over_the_event_limit_is_a_bad_file(tmp_path: Path, store: EventStore) -> None:
    folder = _folder(tmp_path)
    record = folder / "Marcus_Okafor_A1.error.json"
    data = json.loads(record.read_text(encoding="utf-8"))
    record.write_text(json.dumps({**data, "error": "x" * (MAX_EVENT_BYTES + 1)}), encoding="utf-8")
    message = await _only_bad(store, folder)
    assert message.startswith(f"{record}: field episode.finished.detail makes its episode.finished event ")


async def test_a_step_number_beyond_64_bits_is_a_bad_file(tmp_path: Path, store: EventStore) -> None:
    folder = _folder(tmp_path)
    spoiled = _spoil(folder / "on_gpt41_Priya_Raman_C1.json", '"step": 1,', f'"step": {2**64},')
    message = await _only_bad(store, folder)
    assert message == (
        f"{spoiled}: its observation event's step 18446744073709551616 is beyond the 64-bit integers the store holds"
    )
