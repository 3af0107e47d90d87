"""The full check spread over worker processes finds what one pass finds, in the same order, and collects the same
events: the log cut into many ranges (so that every episode crosses a cut), untouched and tampered with across a cut
(docs/design/integrity.md, "Speed")."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import (
    LIFECYCLE_TYPES,
    _segments,
    _verify_parallel,
    open_store,
    verify_whole_store,
)
from p2w_runtime.store._verify import VerifyReport, full_pass
from tests.helpers.tamper_support import attacker


@pytest.fixture(autouse=True)
def _spread_thin() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_segments, "SEGMENT_MIN_EVENTS", 10**9)  # rows, for the forger's SQL
        patch.setattr(_verify_parallel, "PARALLEL_MIN_EVENTS", 0)
        patch.setattr(_verify_parallel, "RANGES_PER_WORKER", 9)
        patch.setattr(_verify_parallel, "workers", lambda end: 2)
        yield


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "examples.db"
    for label in ("one", "two"):
        args = ["--db", str(path), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", label]
        assert CliRunner().invoke(main, args).exit_code == 0
    return path


def both(db: Path) -> tuple[VerifyReport, VerifyReport]:
    """The whole store checked spread over processes, and in one pass, each collecting the lifecycle events."""

    async def check() -> tuple[VerifyReport, VerifyReport]:
        async with open_store(db, create=False, read_only=True) as store:
            end = await store.log_end()
            spread = await verify_whole_store(store, full=True, collect=LIFECYCLE_TYPES)
            return spread, (await full_pass(store, None, end, frozenset(LIFECYCLE_TYPES)))[0]

    return asyncio.run(check())


def tampered(db: Path, *statements: str) -> None:
    with attacker(db) as conn:
        for statement in statements:
            conn.execute(statement)


def reasons(report: VerifyReport) -> list[str]:
    """Every problem as ``verify`` prints it, in the order it does."""
    return [str(p) for p in report.problems]


def test_the_ranges_cover_the_log_once() -> None:
    assert _verify_parallel.ranges(10, 4) == [(0, 2), (2, 5), (5, 7), (7, 10)]
    assert _verify_parallel.ranges(3, 9) == [(0, 1), (1, 2), (2, 3)]


def test_a_spread_check_of_an_untouched_store_agrees_with_one_pass(db: Path) -> None:
    spread, serial = both(db)
    assert spread.ok and serial.ok, (spread.problems, serial.problems)
    fields = ("events", "streams", "seals", "blobs", "unsealed")
    assert [getattr(spread, f) for f in fields] == [getattr(serial, f) for f in fields]
    assert spread.events == 132 and spread.tails == serial.tails
    assert spread.collected is not None and spread.collected == serial.collected
    one_run = ["run.started", *["episode.started", "episode.finished"] * 3, "run.finished"]
    assert [e.type for e in spread.collected] == one_run * 2


def test_the_collected_events_are_the_logs_of_those_types_in_log_order(db: Path) -> None:
    async def logged() -> list[str]:
        async with open_store(db, create=False, read_only=True) as store:
            return [e.event_id async for e in store.read_all() if e.type in LIFECYCLE_TYPES]

    spread, serial = both(db)
    assert spread.collected is not None and [e.event_id for e in spread.collected] == asyncio.run(logged())


def test_the_spread_check_runs_in_workers(db: Path) -> None:
    async def spread() -> tuple[object, bool] | None:
        async with open_store(db, create=False, read_only=True) as store:
            return await _verify_parallel.parallel_pass(store, VerifyReport(), await store.log_end())

    done = asyncio.run(spread())
    assert done is not None and not done[1]


@pytest.mark.parametrize(
    "statements",
    [
        ("DELETE FROM events WHERE position = (SELECT min(position) FROM events WHERE type = 'action')",),
        ("UPDATE events SET seq = seq + 100 WHERE position = 30",),
        ("UPDATE events SET prev_hash = 'sha256:' || hex(zeroblob(32)) WHERE position = 40",),
        ("UPDATE events SET payload = '{}' WHERE position = 50",),
        (
            "DELETE FROM events WHERE position = 20",
            "UPDATE events SET type = 'episode.finished' WHERE position = 18",
        ),
        (
            "UPDATE events SET type = 'episode.finished' WHERE position = 14",
            "UPDATE events SET payload = '{}' WHERE position IN (16, 50, 51, 100)",
            "DELETE FROM events WHERE position IN (33, 57, 58)",
            "UPDATE events SET prev_hash = 'x' WHERE position IN (45, 90)",
        ),
    ],
    ids=["deleted", "renumbered", "relinked", "edited", "after-its-end", "many"],
)
def test_a_tamper_across_the_cuts_is_found_as_one_pass_finds_it(db: Path, statements: tuple[str, ...]) -> None:
    """Every problem, in the order one pass names them (the order ``verify`` prints)."""
    tampered(db, *statements)
    spread, serial = both(db)
    assert not serial.ok
    assert reasons(spread) == reasons(serial)
