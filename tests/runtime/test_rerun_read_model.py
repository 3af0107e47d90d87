"""``rerun`` and ``fork`` read a recorded episode as its trajectory (``p2w_runtime/rerun/_recorded.py``), never its
raw events: what the seams serve the re-executed agent is what the events hold.

Checked on the 48 recorded example episodes (real recordings: observations with tabs and screenshots, LLM calls
with usage, retrievals, final states) against their decoded events: each check fails if the projection drops a
field a seam serves, or keeps it wrong.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import (
    Action,
    AnyPayload,
    EpisodeFinished,
    Event,
    FinalState,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    Observation,
    PageCapture,
    Rationale,
)
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of
from p2w_runtime.llm import Completion
from p2w_runtime.rerun._compare import decisions
from p2w_runtime.rerun._environment import RecordedTab
from p2w_runtime.rerun._llm import recorded_completion
from p2w_runtime.rerun._mismatch import Divergence
from p2w_runtime.rerun._record_as import _key, _record_key
from p2w_runtime.rerun._recorded import RecordedEpisode, load_episode
from p2w_runtime.rerun._retrieval import RecordedIndex
from p2w_runtime.retrieval import SearchHit
from p2w_runtime.store import EventStore, MemoryEventStore, StoreError, _segments, import_bundle, open_store
from tests.helpers.raw_sqlite import raw_sqlite


async def _example_episodes() -> AsyncIterator[tuple[EventStore, list[Event], RecordedEpisode]]:
    """(store, the episode's decoded events, the episode as rerun reads it) for every counted example episode."""
    async with MemoryEventStore() as store:
        runs = [(await import_bundle(store, bundle)).run_id for bundle in example_run_bundles()]
        for run_id in runs:
            for ref in await episodes_of(store, run_id):
                events = [stored.decode() async for stored in store.read_stream(ref.stream)]
                yield store, events, await load_episode(store, ref.stream)


def _payloads(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e.payload for e in events if isinstance(e.payload, kind)]


def _decision(p: AnyPayload) -> tuple[str, int | None, Any] | None:
    """What ``_compare`` compares, read straight from a payload."""
    if isinstance(p, LlmCall):
        return None if p.error is not None else ("llm", p.step, (p.role, p.fingerprint, p.ordinal))
    if isinstance(p, HistoryQuery):
        return "query", p.step, (p.phase, p.query)
    if isinstance(p, HistoryRetrieval):
        return "retrieval", p.step, [(hit.entry_id, hit.score) for hit in p.hits]
    if isinstance(p, Rationale):
        return "rationale", p.step, (p.source, p.text, tuple(p.cited_entry_ids))
    if isinstance(p, Action):
        parsed = (p.parsed.name, tuple(p.parsed.args)) if p.parsed else None
        return "action", p.step, (p.raw, parsed, p.status, p.error)
    if isinstance(p, EpisodeFinished):
        return "end", p.steps, (p.end_reason, p.answer, p.steps)
    return None


async def test_every_seam_serves_what_the_recorded_events_hold() -> None:
    seen = {"episodes": 0, "observations": 0, "screenshots": 0, "tabs": 0, "answered": 0, "usage": 0, "hits": 0}
    async for store, events, episode in _example_episodes():
        seen["episodes"] += 1
        finished = _payloads(events, EpisodeFinished)[0]
        tab = RecordedTab(episode, store, Divergence(), media=True)
        observations = _payloads(events, Observation)
        last = max(o.step for o in observations)
        for o in observations:
            tab.step = o.step - 1
            served = await tab.observe()
            blocked = finished.detail if finished.end_reason == "blocked" and o.step == last else None
            assert (served.url, served.title, served.tabs, served.blocked) == (o.url, o.title, o.tabs, blocked)
            assert served.ax_text == ((await store.get_blob(o.ax_tree)).decode() if o.ax_tree else "")
            assert served.screenshot_png == (await store.get_blob(o.screenshot) if o.screenshot else None)
            seen["observations"] += 1
            seen["screenshots"] += served.screenshot_png is not None
            seen["tabs"] += bool(served.tabs)
        for call in _payloads(events, LlmCall):
            (record,) = [a for a in episode.attempts[(call.fingerprint, call.ordinal)] if a.response == call.response]
            if call.error is None and call.response is not None:
                completion = Completion(call.response, call.finish_reason, call.usage, call.model)
                assert recorded_completion(record) == completion
                assert await episode.request(record) == (call.messages, call.params)
                seen["answered"] += 1
                seen["usage"] += call.usage is not None
        index = RecordedIndex(episode, Divergence())
        for retrieval in _payloads(events, HistoryRetrieval):
            hits = index.search(retrieval.query, retrieval.k, retrieval.threshold)
            assert hits == [SearchHit(h.entry_id, h.rank, h.score or 0.0, h.entry) for h in retrieval.hits]
            assert (index.model_id, index.index_hash) == (retrieval.model_id, retrieval.index_hash)
            seen["hits"] += len(hits)
        final = _payloads(events, FinalState)[0]
        state = await tab.final_state()
        assert (state.url, state.title) == (final.url, final.title)
        assert state.dom_html == await store.get_blob(final.dom_html) and await tab.close() == await store.get_blob(
            final.har
        )
        captures = _payloads(events, PageCapture)
        pages = await tab.capture([c.requested_url for c in captures])
        assert [(p.final_url, p.status, p.title, p.error) for p in pages] == [
            (c.final_url, c.status, c.title, c.error) for c in captures
        ]
    assert seen["episodes"] == 48
    assert all(count > 0 for count in seen.values()), seen


async def test_the_decisions_compared_are_the_recorded_events_decisions() -> None:
    async for _store, events, episode in _example_episodes():
        expected = [d for e in events if (d := _decision(e.payload)) is not None]
        assert [(d.kind, d.step, d.value) for d in decisions(episode.events)] == expected
        assert episode.finished is not None and expected[-1][0] == "end"


async def test_records_are_the_events_after_the_start_in_order_with_their_keys() -> None:
    """``--record-as`` causes each copied event by the source event of the same key, read from the records."""
    async for _store, events, episode in _example_episodes():
        assert [r.event_id for r in episode.events] == [e.event_id for e in events[1:]]
        assert [_record_key(r) for r in episode.events] == [_key(e.payload) for e in events[1:]]
        assert [q.event_id for q in episode.queries()] == [e.event_id for e in events if e.type == "history.query"]


async def test_a_stream_that_is_not_an_episode_is_refused_in_one_line() -> None:
    async with MemoryEventStore() as store:
        with pytest.raises(StoreError, match="^no episode stream 'run/none'$"):
            await load_episode(store, "run/none")


def test_an_episode_with_a_missing_event_is_refused_in_one_line_by_show_and_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The projection checks the chain, so a row deleted behind the store's back is named, not replayed over."""
    db = tmp_path / "p2w.db"
    monkeypatch.setattr(_segments, "SEGMENT_MIN_EVENTS", 10**9)  # every event a row, so that one can be deleted

    async def imported() -> tuple[str, str, str]:
        async with open_store(db) as store:
            run_id = (await import_bundle(store, example_run_bundles()[0])).run_id
            ref = (await episodes_of(store, run_id))[0]
            return run_id, ref.stream, ref.task_id

    run_id, stream, task_id = asyncio.run(imported())
    with raw_sqlite(db) as conn:  # what only someone rewriting the file can do
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DELETE FROM events WHERE stream = ? AND seq = 3", (stream,))
    for command in (["show", run_id, task_id], ["rerun", run_id, task_id, "--recorded-retrieval"]):
        result = CliRunner().invoke(main, ["--db", str(db), *command])
        assert result.exit_code == 2, result.output
        assert result.output == (
            f"error: stream {stream}: event seq 4 does not follow the one before it (its prev_hash differs): "
            "events are missing or out of order; run p2w-rt verify\n"
        )
