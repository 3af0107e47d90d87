"""The contract for ``SummaryRows``: read models kept beside the log, current to a mark (docs/design/summaries.md)."""

from __future__ import annotations

import asyncio

from p2w_rt.schemas import uuid7
from p2w_runtime.store import EventStore, Summary
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import run_started


def _row(key: str, group: str = "g", ordinal: int = 0, body: str = "{}", kind: str = "k") -> Summary:
    return Summary(kind, key, group, ordinal, body)


class SummariesContract(StoreFixture):
    """Rows replaced by key, read by group in order, written only by the writer that found the mark; the log's end."""

    async def test_the_log_end_is_the_last_position(self, store: EventStore) -> None:
        assert await store.log_end() == 0
        await store.append([run_started(uuid7(), "a", agent="a", model="m")])
        stored = await store.append([run_started(uuid7(), "b", agent="a", model="m")])
        assert await store.log_end() == stored[-1].position == 2

    async def test_rows_are_replaced_by_key_and_read_by_group_in_order(self, store: EventStore) -> None:
        assert await store.summary_mark("m") == 0
        assert await store.read_summaries("k") == []
        rows = [_row("b", "g1", 2), _row("a", "g1", 3), _row("c", "g2", 1), _row("x", "g1", 1, kind="other")]
        assert await store.write_summaries("m", rows, since=0, until=5)
        assert await store.summary_mark("m") == 5
        assert [r.key for r in await store.read_summaries("k", group="g1")] == ["b", "a"]
        assert [r.key for r in await store.read_summaries("k")] == ["b", "a", "c"]
        assert await store.read_summaries("other") == [rows[3]]
        assert await store.write_summaries("m", [_row("a", "g2", 0, '{"v": 2}')], since=5, until=9)
        assert await store.read_summaries("k", keys=["a", "zz"]) == [_row("a", "g2", 0, '{"v": 2}')]
        assert [r.key for r in await store.read_summaries("k", group="g1")] == ["b"]
        many = [f"key{i:04d}" for i in range(1200)]  # past one IN list
        assert await store.write_summaries("m", [_row(k) for k in many], since=9, until=10)
        assert [r.key for r in await store.read_summaries("k", keys=many)] == many

    async def test_only_the_writer_that_found_the_mark_moves_it(self, store: EventStore) -> None:
        assert await store.write_summaries("m", [_row("a")], since=0, until=3)
        assert not await store.write_summaries("m", [_row("a", body='{"late": 1}')], since=0, until=2)
        assert await store.summary_mark("m") == 3
        assert (await store.read_summaries("k"))[0].body == "{}"  # the refused write left nothing
        results = await asyncio.gather(
            *(store.write_summaries("m", [_row(f"r{i}")], since=3, until=4 + i) for i in range(5))
        )
        assert sorted(results) == [False] * 4 + [True]  # one of five concurrent catch-ups wins
        assert len(await store.read_summaries("k")) == 2
        assert await store.summary_mark("other") == 0  # marks are per model

    async def test_clearing_drops_the_rows_and_the_mark(self, store: EventStore) -> None:
        await store.write_summaries("m", [_row("a"), _row("b", kind="k2"), _row("c", kind="keep")], since=0, until=4)
        await store.clear_summaries("m", ["k", "k2"])
        assert await store.summary_mark("m") == 0
        assert await store.read_summaries("k") == [] and await store.read_summaries("k2") == []
        assert [r.key for r in await store.read_summaries("keep")] == ["c"]
