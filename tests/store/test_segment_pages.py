"""How many statements and decodes a read of segments takes: a page selects ``size // 16`` segments beside its rows,
whatever the write threshold was when the store's modules were imported (docs/design/store.md, "Segments")."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from p2w_runtime.store import _sql, _sql_pages, open_store
from p2w_runtime.store._segments import SEGMENT_MAX_EVENTS, SEGMENT_MIN_EVENTS
from p2w_runtime.store._sql_pages import EVENTS_PER_SEGMENT
from p2w_runtime.store._sqlite_statements import STATEMENTS
from p2w_runtime.store.contract.builders import observation
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite

SEGMENTS = 10
"""Streams of 17 events appended at once: ten segments (the write's first event a row)."""


def _counting(calls: list[object], call: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any) -> Any:
        calls.append(args)
        return call(*args)

    return counted


async def test_a_read_takes_a_statement_per_page_and_decodes_each_segment_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """72 rows, then the segments: read_all's first page is bound by its 64th row, before the 4 segments it
    selected, which are left to the next page undecoded."""
    assert EVENTS_PER_SEGMENT == SEGMENT_MIN_EVENTS
    monkeypatch.setattr(_sql, "PAGE_SIZE", 64)  # 4 segments a page of read_all, 20 of read_streams
    decodes: list[object] = []
    monkeypatch.setattr(_sql_pages, "segment_events", _counting(decodes, _sql_pages.segment_events))
    async with open_store(tmp_path / "p2w.db") as store:
        written = [e for k in range(9) for e in await store.append([observation("steps", k) for _ in range(8)])]
        written += await store.append([observation(f"s{n:02d}", k) for n in range(SEGMENTS) for k in range(17)])
        statements: list[object] = []
        store._fetch_page = _counting(statements, store._fetch_page)  # type: ignore[attr-defined]

        read: Callable[[], Awaitable[list[Any]]]
        for read, expected, pages in (
            (lambda: _all(store.read_all()), written, 4),  # 64 rows; 8 rows, 4 segments; 4; 2
            (
                lambda: _all(store.read_streams(sorted({e.stream for e in written}))),
                sorted(written, key=lambda e: (e.stream, e.seq)),
                1,
            ),
        ):
            statements.clear()
            decodes.clear()
            assert await read() == expected
            assert (len(statements), len(decodes)) == (pages, SEGMENTS)


async def _all(events: Any) -> list[Any]:
    return [e async for e in events]


def test_pages_do_not_follow_a_write_threshold_raised_while_the_store_was_imported(tmp_path: Path) -> None:
    """What ``bench_bytes`` did: its row store, written with ``SEGMENT_MIN_EVENTS`` raised, was the process's first
    store, so the reads' modules were imported then; a page held one segment for the rest of the process."""
    script = textwrap.dedent(f"""
        import asyncio
        from p2w_runtime.store import _segments, open_store

        async def main():
            _segments.SEGMENT_MIN_EVENTS = 10**9
            from p2w_runtime.store.contract.builders import observation  # imports the reads' modules while raised
            async with open_store({str(tmp_path / "rows.db")!r}) as rows:
                await rows.append([observation("rows", k) for k in range(17)])
            _segments.SEGMENT_MIN_EVENTS = 16
            from p2w_runtime.store import _sql  # imported by the first store opened, above

            _sql.PAGE_SIZE = 64
            async with open_store({str(tmp_path / "segments.db")!r}) as store:
                await store.append([observation(f"s{{n}}", k) for n in range({SEGMENTS}) for k in range(17)])
                statements = []
                fetch = store._fetch_page
                store._fetch_page = lambda *args: statements.append(args) or fetch(*args)
                assert len([e async for e in store.read_all()]) == {SEGMENTS * 17}
                print(len(statements))

        asyncio.run(main())
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3"]


async def test_a_long_stream_is_cut_into_segments_and_a_read_decodes_only_those_it_reaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2,000-event stream appended at once: a row, then segments of at most ``SEGMENT_MAX_EVENTS`` (the last 15
    events too few for one of their own). Its first screen decodes the first segment only; a whole read, each once."""
    decodes: list[object] = []
    monkeypatch.setattr(_sql_pages, "segment_events", _counting(decodes, _sql_pages.segment_events))
    async with open_store(tmp_path / "p2w.db") as store:
        written = await store.append([observation("long", k) for k in range(1 + 3 * SEGMENT_MAX_EVENTS + 15)])
        counted = await store.count()
        events = store.read_stream("long")
        first = [await anext(events) for _ in range(10)]
        await events.aclose()  # type: ignore[attr-defined]
        assert first == written[:10]
        assert len(decodes) == 1
        decodes.clear()
        assert await _all(store.read_stream("long")) == written
        assert (
            await _all(store.read_stream("long", after_seq=SEGMENT_MAX_EVENTS + 7)) == written[SEGMENT_MAX_EVENTS + 7 :]
        )
    assert len(decodes) == 3 + 2
    assert counted[0] == len(written)
    with raw_sqlite(tmp_path / "p2w.db") as raw:
        lengths = [n for (n,) in raw.execute("SELECT last_seq - first_seq + 1 FROM segments ORDER BY first_seq")]
        assert lengths == [SEGMENT_MAX_EVENTS] * 3
        assert raw.execute("SELECT count(*) FROM events").fetchone() == (1 + 15,)


def _reversed(fetch: Callable[..., Awaitable[list[Any]]], pages: list[object]) -> Callable[..., Awaitable[list[Any]]]:
    async def fetched(*args: Any) -> list[Any]:
        pages.append(args)
        return list(reversed(await fetch(*args)))

    return fetched


async def test_every_read_is_in_order_whatever_order_the_database_hands_a_page_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's statement is a ``UNION ALL`` of rows and segments with no order of its own (PostgreSQL's parallel
    append may interleave its parts; SQLite hands them one after the other): the reader orders each page. Here every
    page arrives reversed, its segments before its rows, and every read gives its events in order, in as many pages."""
    monkeypatch.setattr(_sql, "PAGE_SIZE", 64)
    async with open_store(tmp_path / "p2w.db") as store:
        written = [e for k in range(9) for e in await store.append([observation("steps", k) for _ in range(8)])]
        written += await store.append([observation(f"s{n:02d}", k) for n in range(SEGMENTS) for k in range(17)])
        written += [e for k in range(3) for e in await store.append([observation("s03", 17 + k)])]
        streams = sorted({e.stream for e in written})

        async def reads() -> dict[str, list[Any]]:
            return {
                "read_all": await _all(store.read_all()),
                "read_stream rows": await _all(store.read_stream("steps")),
                "read_stream": await _all(store.read_stream("s03")),
                "read_streams": await _all(store.read_streams(streams)),
                "read_chained": await _all(store.read_chained(streams)),
                "read_all typed": await _all(store.read_all(types=["observation"], stream_prefix="s0")),
            }

        pages: list[object] = []
        store._fetch_page = _counting(pages, store._fetch_page)  # type: ignore[attr-defined]
        in_order = await reads()
        assert in_order["read_all"] == written
        assert in_order["read_streams"] == sorted(written, key=lambda e: (e.stream, e.seq))
        assert len(in_order["read_stream rows"]) == 72
        in_order_pages, reversed_pages = len(pages), list[object]()
        store._fetch_page = _reversed(store._fetch_page, reversed_pages)  # type: ignore[attr-defined]
        assert await reads() == in_order
        assert len(reversed_pages) == in_order_pages


PAGES = ("events_after", "stream_events", "streams_events", "streams_chained", "filtered_untyped", "filtered_typed")
PAGE_STATEMENTS = [f"{name}{tail}" for name in PAGES for tail in ("", "_with_segments")]
"""The pages of the event reads whose rows come in the order of the index they are selected by. (``filtered_indexed``
selects its rows by the type index and sorts them by position: that sort is its rows', not the page's.)"""


@pytest.mark.parametrize("name", PAGE_STATEMENTS)
def test_a_page_of_events_is_read_from_its_indexes_without_sorting_its_rows_again(name: str, tmp_path: Path) -> None:
    """Ordering a page's ``UNION`` in SQL copied every selected row, payload and all, into a temporary B-tree: it
    took as long as the read itself (20,000 judgments of 2 KB: 57 ms against 28). No page statement sorts now."""
    asyncio.run(_compacted_store(tmp_path / "p2w.db"))
    compiled = STATEMENTS[name]
    with raw_sqlite(tmp_path / "p2w.db") as raw:
        plan = [row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {compiled.sql}", [None] * len(compiled.names))]
    assert plan and not [step for step in plan if "TEMP B-TREE" in step], plan


async def _compacted_store(path: Path) -> None:
    """A store set up at ``path`` (its tables and indexes) with one stream appended as a row and a segment."""
    async with open_store(path) as store:
        await store.append([observation("s", k) for k in range(17)])
