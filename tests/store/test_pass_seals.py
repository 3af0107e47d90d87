"""A derived stream's seal lists the run's streams that moved since the seal the stream ends with
(``p2w_runtime.store.seal_streams``): a label posted on a large run does not seal every episode again, and ``verify``
still names a stream deleted or cut short under any of the seals, the first (whole) one or a later (partial) one."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from p2w_rt.replay.agreement import Label, record_labels
from p2w_runtime.store import EventStore, _seal, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers import tamper_support
from tests.helpers.classify_builders import add_run, good_episode
from tests.helpers.seals_support import cli, rows

RUN = "dec"
JUDGMENTS = f"{RUN}/judgments"
TASKS = ("Alex_Garcia_A1", "Alex_Garcia_B1", "Alex_Garcia_C1")


def label(db: Path, task: str, annotator: str) -> None:
    async def go() -> None:
        async with open_store(db) as store:
            await record_labels(store, [Label("test", RUN, task, "p_web", 1.0, 1.0, annotator)])

    asyncio.run(go())


async def append_attempt(store: EventStore, task: str) -> str:
    """A new finished attempt at ``task``: a stream of the run that did not exist at the earlier seals."""
    b = EpisodeBuilder(RUN, task, query="again", episode_id=f"{task}#2")
    b.observation(1, "https://shop.example/0", title="page")
    b.action(1, "stop", "answer")
    b.finish("answered", "answer", final_url="https://shop.example/0", steps=1)
    await store.append(b.events, b.blobs)
    return b.stream


def attempt_again(db: Path, task: str) -> str:
    async def go() -> str:
        async with open_store(db) as store:
            return await append_attempt(store, task)

    return asyncio.run(go())


def seals(db: Path) -> list[list[str]]:
    """The streams each ``streams.sealed`` of the run's judgments names, oldest first."""
    found = rows(db, "SELECT payload FROM events WHERE stream = ? AND type = 'streams.sealed' ORDER BY seq", JUDGMENTS)
    return [sorted(seal["stream"] for seal in json.loads(payload)["seals"]) for (payload,) in found]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "runs.db"

    async def build() -> None:
        async with open_store(path) as store:
            await add_run(store, "december", [good_episode(RUN, task) for task in TASKS], run_id=RUN)

    asyncio.run(build())
    return path


def problems(db: Path) -> list[str]:
    result = cli(db, "verify", "--full")
    return [line for line in result.output.splitlines() if line.startswith("MISMATCH")]


def attacker(db: Path) -> AbstractContextManager[sqlite3.Connection]:
    """Raw sqlite3 with the triggers that refuse deletes dropped, as anyone with the file can do."""
    return tamper_support.attacker(db, ("events_delete_held", "segments_no_delete"))


def test_each_label_seals_only_the_streams_that_moved_and_verify_still_sees_them_all(db: Path) -> None:
    label(db, TASKS[0], "ana")
    label(db, TASKS[1], "ben")
    again = attempt_again(db, TASKS[2])
    label(db, TASKS[2], "ana")
    whole = sorted([RUN, *(f"{RUN}/{task}" for task in TASKS)])
    assert seals(db) == [whole, [], [again]]
    assert cli(db, "verify", "--full").exit_code == 0 and problems(db) == []

    with attacker(db) as conn:
        for table in ("events", "segments"):  # sealed by the first seal only
            conn.execute(f"DELETE FROM {table} WHERE stream = ?", (f"{RUN}/{TASKS[1]}",))
        conn.execute("DELETE FROM events WHERE stream = ? AND seq = (SELECT max(seq) FROM events WHERE stream = ?)",
                     (again, again))  # fmt: skip  # sealed by the last seal only
    found = problems(db)
    assert any(f"stream {RUN}/{TASKS[1]}: stream missing: sealed by streams.sealed ({JUDGMENTS} seq 2)" in p
               for p in found), found  # fmt: skip
    assert any(f"stream {again} seq" in p and "stream truncated" in p and f"({JUDGMENTS} seq 6)" in p
               for p in found), found  # fmt: skip


def test_more_moved_than_the_limit_seals_every_stream_again(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    label(db, TASKS[0], "ana")
    monkeypatch.setattr(_seal, "SEAL_SCAN_LIMIT", 0)
    attempt_again(db, TASKS[2])
    label(db, TASKS[1], "ben")
    first, second = seals(db)
    assert len(second) == len(first) + 1 and set(first) < set(second)


def test_a_seal_another_writer_appended_under_is_followed_by_a_whole_one(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer's episode lands between a label's seal reading the heads and the seal being stored: the seal
    does not commit to it, so a seal of every stream follows at once, and the next label's seal again lists what
    moved since that one only."""
    label(db, TASKS[0], "ana")
    real = _seal.seal_streams
    landed: list[str] = []

    async def heads_then_another_writer(store: EventStore, run_id: str, *, into: str, whole: bool = False) -> list:
        seals = await real(store, run_id, into=into, whole=whole)
        if not landed:
            landed.append(await append_attempt(store, TASKS[2]))
        return seals

    monkeypatch.setattr(_seal, "seal_streams", heads_then_another_writer)
    label(db, TASKS[1], "ben")
    monkeypatch.setattr(_seal, "seal_streams", real)
    label(db, TASKS[1], "cy")
    whole = sorted([RUN, *(f"{RUN}/{task}" for task in TASKS)])
    assert seals(db) == [whole, [], sorted([*whole, landed[0]]), []]

    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND seq = (SELECT max(seq) FROM events WHERE stream = ?)",
                     (landed[0], landed[0]))  # fmt: skip
    assert any(f"stream {landed[0]} seq" in p and "stream truncated" in p for p in problems(db)), problems(db)
