"""Every episode writer goes through ``EpisodeWriter``: no module builds an episode's events by hand, and what
the importers and the agent stored is exactly what a fresh writer accepts (so the grammar saw each event)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from p2w_rt.schemas import NewEvent
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import EpisodeGrammarError, EpisodeWriter, episodes_of
from p2w_runtime.store import EventStore, import_bundle
from tests.helpers.import_support import AGENTOCCAM, BROWSER_USE, run_import
from tests.helpers.paths import REPO


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


EPISODE_PAYLOADS = {
    "EpisodeStarted",
    "EpisodeFinished",
    "Observation",
    "Action",
    "HistoryQuery",
    "HistoryRetrieval",
    "Rationale",
    "FinalState",
}
WRITERS = [
    "p2w_runtime",
    "replay",
    "p2w_cli",
    "benchmarks",
    "tests/helpers/builders.py",
    "tests/helpers/classify_builders.py",
]
RAW_STORE_BENCHMARK = REPO / "benchmarks" / "bench_store.py"
"""Measures the store's append alone, on events that are not an episode; it writes no episode."""
STORE_CONTRACT = "p2w_runtime/store/contract"
"""The store's contract tests append loose events to test the store alone; they write no episode."""


def _sources() -> list[Path]:
    paths: list[Path] = []
    for root in WRITERS:
        path = REPO / root
        paths += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    exempt = ("p2w_runtime/domain", STORE_CONTRACT)
    return [p for p in paths if p != RAW_STORE_BENCHMARK and not any(part in p.as_posix() for part in exempt)]


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def test_no_module_builds_episode_events_or_started_events_by_hand() -> None:
    by_hand: list[str] = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
            if _called(node) in ("EpisodeStarted", "RunStarted"):
                by_hand.append(f"{where} builds a started event (use p2w_runtime.domain's factories)")
            if _called(node) == "NewEvent":
                assert isinstance(node, ast.Call)
                payload = next((k.value for k in node.keywords if k.arg == "payload"), None)
                if payload is not None and _called(payload) in EPISODE_PAYLOADS:
                    by_hand.append(f"{where} wraps an episode payload in NewEvent (use EpisodeWriter.add)")
    assert by_hand == []


async def _restaged(store: EventStore, stream: str) -> list[NewEvent]:
    return [
        NewEvent(event_id=e.event_id, stream=e.stream, payload=e.payload, causation_id=e.causation_id)
        async for e in (stored.decode() async for stored in store.read_stream(stream))
    ]


async def test_every_imported_episode_is_what_a_fresh_writer_accepts_and_a_reorder_is_refused(
    store: EventStore,
) -> None:
    checked = 0
    for fmt in (AGENTOCCAM, BROWSER_USE):
        report = await run_import(store, fmt, label=fmt)
        for episode in await episodes_of(store, report.run_id, every_attempt=True):
            events = await _restaged(store, episode.stream)
            EpisodeWriter(episode.stream).extend(events)
            checked += 1
            queried = [i for i, e in enumerate(events) if e.type == "history.query"]
            if queried:  # the retrieval written before its query: the writer refuses it
                i = queried[0]
                with pytest.raises(EpisodeGrammarError, match="history.retrieval refused"):
                    EpisodeWriter(episode.stream).extend([*events[:i], events[i + 1], events[i]])
    assert checked >= 4


async def test_the_agents_recorded_example_runs_are_what_a_fresh_writer_accepts(store: EventStore) -> None:
    """The bundled example runs were recorded by the agent (before the grammar existed): all 48 episodes,
    with their history accesses, llm calls and final states, pass it unchanged."""
    for bundle in example_run_bundles():
        await import_bundle(store, bundle)
    episodes = await episodes_of(store, every_attempt=True)
    for episode in episodes:
        EpisodeWriter(episode.stream).extend(await _restaged(store, episode.stream))
    assert len(episodes) == 48
