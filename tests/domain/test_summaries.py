"""Run and episode summaries (``p2w_runtime/domain/_summaries.py``): built from the log the first time a store is read,
kept current by whoever reads next, the same whatever the order of reads and writes, checked by ``verify`` and
rebuilt from the log (docs/design/summaries.md)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import EpisodeFinished, uuid7
from p2w_runtime.domain import (
    EpisodeWriter,
    Met,
    RunRecording,
    check_summaries,
    episodes_of,
    list_runs,
    rebuild_summaries,
)
from p2w_runtime.domain._summaries import SUMMARY_TYPES
from p2w_runtime.domain._summary_rows import EPISODES, MODEL, RUNS
from p2w_runtime.store import EventStore, MemoryEventStore, Summary, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_started
from tests.helpers.paths import DATA
from tests.helpers.raw_sqlite import raw_sqlite

FIXTURE = DATA / "fixture_dbs" / "v1.db"


def _episode(run_id: str, task: str, end: str | None, *, episode_id: str | None = None) -> EpisodeBuilder:
    b = EpisodeBuilder(run_id, task, query=f"q {task}", level=1, episode_id=episode_id)
    b.observation(1, f"https://shop.example/{task}")
    b.action(1, "click", "1")
    if end is not None:
        b.finish(end, answer=f"answer {task}", steps=1)
    return b


async def _listing(store: EventStore) -> list[object]:
    """Everything the listings read, in a comparable form."""
    runs = [(r.run_id, r.label, r.status, r.episodes, r.attempts, r.recorded_at) for r in await list_runs(store)]
    attempts = [
        (e.stream, e.task_id, e.level, e.end_reason, e.hash) for e in await episodes_of(store, every_attempt=True)
    ]
    return [runs, attempts]


async def _heads(store: EventStore) -> dict[str, str]:
    return {h.stream: h.last_hash for h in await store.list_streams()}


async def test_summaries_follow_every_append_and_count_as_the_rule_says() -> None:
    store = MemoryEventStore()
    run_id = uuid7()
    await store.append([run_started(run_id, "r")])
    for task, end in (("t1", "answered"), ("t2", "aborted"), ("t3", None)):
        await store.append(_episode(run_id, task, end).events)
    (info,) = await list_runs(store)
    assert (info.episodes, info.attempts, info.status) == (1, 3, "unfinished")
    assert await store.summary_mark(MODEL) == await store.log_end()
    running = next(e for e in await episodes_of(store, run_id, every_attempt=True) if e.task_id == "t3")
    assert running.end_reason is None and running.hash == (await _heads(store))[running.stream]
    # a retry of t2 finishes, t3 goes on and ends: rows stored before are continued, not rebuilt
    await store.append(_episode(run_id, "t2", "answered", episode_id="t2#2").events)
    await store.append([EpisodeWriter.closing(running.stream).add(EpisodeFinished(end_reason="max_steps", steps=1))])
    await RunRecording(store, run_id).close()
    (info,) = await list_runs(store)
    assert (info.episodes, info.attempts, info.status) == (3, 4, "completed")
    counted = await episodes_of(store, run_id)
    assert [(e.episode_id, e.end_reason) for e in counted] == [
        ("t1", "answered"),
        ("t3", "max_steps"),
        ("t2#2", "answered"),
    ]
    heads = await _heads(store)
    assert all(e.hash == heads[e.stream] for e in counted)  # the trajectory hash judgments are keyed by
    for every in (False, True):  # a task's episodes alone (what a label reads): its attempts, its counted one
        whole = await episodes_of(store, run_id, every_attempt=every)
        assert await episodes_of(store, run_id, every_attempt=every, tasks={"t2"}) == [
            e for e in whole if e.task_id == "t2"
        ]
    assert await check_summaries(store) == []
    # the same answers from rows built in one go from the whole log
    before = await _listing(store)
    await rebuild_summaries(store)
    assert await _listing(store) == before


def test_verify_names_a_summary_that_disagrees_with_the_log_and_rebuild_mends_it(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    key = asyncio.run(_tamper(db))
    result = CliRunner().invoke(main, ["--db", str(db), "verify"])
    assert result.exit_code == 1
    assert f"MISMATCH stream {key}: the episode summary disagrees with the log" in result.stderr
    assert "MISMATCH stream no-such-run: a run summary names nothing in the log" in result.stderr
    result = CliRunner().invoke(main, ["--db", str(db), "verify", "--rebuild-summaries"])
    assert result.exit_code == 0, result.stderr
    result = CliRunner().invoke(main, ["--db", str(db), "show", "r", "--json"])
    assert '"end_reason": "answered"' in result.stdout


async def test_the_check_folds_the_events_a_full_verify_met_and_reads_only_the_log_after_them() -> None:
    """``verify --full`` hands the check the summary events its pass met (``Met``) up to where it began; what was
    appended since is read from the log."""
    store = MemoryEventStore()
    run_id = uuid7()
    await store.append([run_started(run_id, "r")])
    await store.append(_episode(run_id, "t1", "answered").events)
    through = await store.log_end()
    met = [e async for e in store.read_all() if e.type in SUMMARY_TYPES]
    await store.append(_episode(run_id, "t2", "answered").events)  # after the pass began: not among ``met``
    await list_runs(store)
    assert await check_summaries(store, None, Met(through, met)) == []
    # what is folded is what ``met`` holds: without t1's start, its stored row names nothing and the run's differs
    found = dict(await check_summaries(store, None, Met(through, met[:1] + met[2:])))
    assert set(found) == {met[1].stream, run_id} and "names nothing in the log" in found[met[1].stream]


async def _tamper(db: Path) -> str:
    """A run whose episode's summary says it ended otherwise, and a run summary of no run: what verify reports."""
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, "r")])
        await store.append(_episode(run_id, "t1", "answered").events)
        await list_runs(store)
        mark = await store.log_end()
        (row,) = await store.read_summaries(EPISODES)
        wrong = Summary(row.kind, row.key, row.group, row.ordinal, row.body.replace("answered", "max_steps"))
        extra = Summary(RUNS, "no-such-run", "", 1, (await store.read_summaries(RUNS))[0].body)
        assert await store.write_summaries(MODEL, [wrong, extra], since=mark, until=mark)
        problems = dict(await check_summaries(store))
        assert set(problems) == {row.key, "no-such-run"}
        assert "disagrees with the log" in problems[row.key]
        assert "names nothing in the log" in problems["no-such-run"]
    return row.key


async def test_readers_on_two_connections_catch_up_at_once_and_agree(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    run_id = uuid7()
    async with open_store(db) as a, open_store(db) as b:
        await a.append([run_started(run_id, "r")])
        for i in range(30):
            await (a if i % 2 else b).append(_episode(run_id, f"t{i}", "answered").events)
            if i % 7 == 0:
                first, second = await asyncio.gather(_listing(a), _listing(b))
                assert first == second
        first, second = await asyncio.gather(_listing(a), _listing(b))
        assert first == second and first[0][0][3:5] == (30, 30)
        assert await check_summaries(a) == []


async def test_an_old_database_gets_its_summaries_and_a_read_only_one_is_folded_in_memory(tmp_path: Path) -> None:
    writable, read_only = tmp_path / "v1.db", tmp_path / "v1-ro.db"
    shutil.copyfile(FIXTURE, writable)
    shutil.copyfile(FIXTURE, read_only)
    async with open_store(read_only, read_only=True) as store:
        assert await store.summary_mark(MODEL) is None  # a file from before summaries, nothing may create them
        folded = await _listing(store)
        assert await check_summaries(store) == []
    async with open_store(writable) as store:
        assert await store.summary_mark(MODEL) == 0
        assert await _listing(store) == folded
        assert await store.summary_mark(MODEL) == await store.log_end()
        assert await _listing(store) == folded  # now read from the stored rows
        assert folded[0] and folded[1]


async def test_a_read_only_reader_of_stale_rows_sees_the_log_as_it_is(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, "r")])
        await store.append(_episode(run_id, "t1", "answered").events)
        await list_runs(store)  # rows current here
        await store.append(_episode(run_id, "t2", "answered").events)
    async with open_store(db, read_only=True) as store:
        mark = await store.summary_mark(MODEL)
        assert mark is not None and mark < await store.log_end()
        (info,) = await list_runs(store)
        assert (info.episodes, info.attempts) == (2, 2)
        assert [e.task_id for e in await episodes_of(store, run_id)] == ["t1", "t2"]
        assert await store.summary_mark(MODEL) == mark  # nothing written
    async with open_store(db) as store:
        assert [e.task_id for e in await episodes_of(store, run_id)] == ["t1", "t2"]
        assert await check_summaries(store) == []


def test_rows_of_events_deleted_behind_the_stores_back_are_rebuilt_from_what_the_log_holds(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    run_id = uuid7()

    async def build() -> None:
        async with open_store(db) as store:
            await store.append([run_started(run_id, "r")])
            for task in ("t1", "t2"):
                await store.append(_episode(run_id, task, "answered").events)
            assert [(r.episodes, r.attempts) for r in await list_runs(store)] == [(2, 2)]

    asyncio.run(build())
    with raw_sqlite(db) as conn:  # what only someone rewriting the file can do
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DELETE FROM events WHERE stream = ?", (f"{run_id}/t2",))

    async def listed() -> tuple[list[tuple[int, int]], list[tuple[str, str]]]:
        async with open_store(db) as store:
            runs = [(r.episodes, r.attempts) for r in await list_runs(store)]
            return runs, await check_summaries(store)

    assert asyncio.run(listed()) == ([(1, 1)], [])
