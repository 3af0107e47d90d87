"""The episode grammar, checked by ``EpisodeWriter`` at write time: each illegal order or cause is refused
before it is staged, so nothing of it reaches the store; the orders the agent and the importers write pass."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2w_rt.schemas import (
    Action,
    EpisodeFinished,
    EpisodeSealed,
    EpisodeStarted,
    FinalState,
    ForkPoint,
    HistoryQuery,
    HistoryRetrieval,
    Judgment,
    LlmCall,
    Observation,
    PageCapture,
    ParsedAction,
    Rationale,
    RunFinished,
    StreamSeal,
)
from p2w_runtime.domain import EpisodeGrammarError, EpisodeWriter, episode_started
from p2w_runtime.store import EventStore
from p2w_runtime.testing.episodes import SketchTask


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


TASK = SketchTask("Ann_Lee_A1", "find the usual chinos", "https://www.bing.com/", 1, None)
STREAM = "run/Ann_Lee_A1"


def started(episode_id: str = "Ann_Lee_A1") -> EpisodeStarted:
    return episode_started(TASK, episode_id=episode_id, scheme="on-demand")


def query(text: str = "which size", step: int | None = 1) -> HistoryQuery:
    return HistoryQuery(step=step, phase="on-demand", query=text)


def retrieval(text: str = "which size", step: int | None = 1) -> HistoryRetrieval:
    return HistoryRetrieval(step=step, query=text, model_id="m", index_hash="0" * 64, k=20, threshold=0.5, hits=[])


def answer(step: int | None = 1) -> Rationale:
    return Rationale(step=step, source="generator", text="32x32")


def planner_call(step: int) -> LlmCall:
    return LlmCall(role="planner", model="m", step=step, messages=[], latency_s=0.1, fingerprint="f", ordinal=0)


def act(step: int, name: str = "click", *args: str) -> Action:
    parsed = ParsedAction(name=name, args=list(args or ["3"]))
    return Action(step=step, raw=parsed.render(), parsed=parsed, status="executed")


def opened() -> EpisodeWriter:
    writer = EpisodeWriter(STREAM)
    writer.add(started())
    return writer


def asked(writer: EpisodeWriter) -> tuple[str, str]:
    q = writer.add(query())
    r = writer.add(retrieval(), q.event_id)
    return q.event_id, r.event_id


def finished(writer: EpisodeWriter) -> None:
    writer.add(EpisodeFinished(end_reason="answered", answer="done", steps=1))


# Each case: what was written before (on an opened episode), then the refused event and its cause, and the reason.
Prepare = Callable[[EpisodeWriter], object]
REFUSED: list[tuple[str, Prepare, Callable[[EpisodeWriter], tuple[object, str | None]], str]] = [
    ("a second start", lambda w: None, lambda w: (started(), None), "already started"),
    ("a step after the end", finished, lambda w: (Observation(step=2, url="u"), None), "has finished"),
    ("a second end", finished, lambda w: (EpisodeFinished(end_reason="error"), None), "has finished"),
    ("an action after the final state", lambda w: w.add(FinalState(url="u")), lambda w: (act(1), None), "final_state"),
    (
        "a second final state",
        lambda w: w.add(FinalState(url="u")),
        lambda w: (FinalState(url="u"), None),
        "final_state",
    ),
    ("a retrieval without a cause", lambda w: w.add(query()), lambda w: (retrieval(), None), "history.query"),
    ("a retrieval caused by an unknown event", lambda w: None, lambda w: (retrieval(), "0" * 32), "history.query"),
    (
        "a retrieval caused by an observation",
        lambda w: None,
        lambda w: (retrieval(), w.add(Observation(step=1, url="u")).event_id),
        "history.query",
    ),
    ("a second retrieval for one query", asked, lambda w: (retrieval(), _first_query(w)), "awaiting"),
    (
        "a retrieval of another query's text",
        lambda w: None,
        lambda w: (retrieval("other"), w.add(query()).event_id),
        "not the query",
    ),
    ("a memory answer without a cause", asked, lambda w: (answer(), None), "history.retrieval"),
    ("a memory answer caused by the query", asked, lambda w: (answer(), _first_query(w)), "history.retrieval"),
    (
        "a planner rationale naming a cause",
        asked,
        lambda w: (Rationale(step=1, source="planner", text="t"), _first_query(w)),
        "only a retrieval",
    ),
    ("an action naming a cause", asked, lambda w: (act(1), _first_query(w)), "only a retrieval"),
    (
        "an observation after its step's action",
        lambda w: w.add(act(1)),
        lambda w: (Observation(step=1, url="u"), None),
        "after an action of step 1",
    ),
    (
        "a planner call after its step's action",
        lambda w: w.add(act(2)),
        lambda w: (planner_call(2), None),
        "after an action of step 2",
    ),
    (
        "a run event in an episode",
        lambda w: None,
        lambda w: (RunFinished(status="completed", episodes=0), None),
        "not an episode event",
    ),
    ("a judgment in an episode", lambda w: None, lambda w: (_judgment(), None), "not an episode event"),
    (
        "an episode seal in an episode (it goes in the run's stream)",
        finished,
        lambda w: (EpisodeSealed(seals=[StreamSeal(stream=STREAM, events=2, head_hash="0" * 64)]), None),
        "not an episode event",
    ),
    (
        "a page capture after the final state",
        lambda w: w.add(FinalState(url="u")),
        lambda w: (capture(0), None),
        "final_state",
    ),
    ("a step after a page capture", lambda w: w.add(capture(0)), lambda w: (act(2), None), "follow a page capture"),
    ("a page capture out of order", lambda w: w.add(capture(0)), lambda w: (capture(2), None), "capture 1 comes next"),
    ("a page capture naming a cause", asked, lambda w: (capture(0), _first_query(w)), "only a retrieval"),
]


def capture(index: int) -> PageCapture:
    return PageCapture(index=index, requested_url=f"http://threads.p2w.test/product/{index}", status=200)


def _first_query(writer: EpisodeWriter) -> str:
    return next(e.event_id for e in writer.events if e.type == "history.query")


def _judgment() -> Judgment:
    return Judgment(
        episode_stream=STREAM, task_id="Ann_Lee_A1", trajectory_hash="0" * 64, judge_id="j", judge_version="1",
        config_hash="0" * 64,
    )  # fmt: skip


@pytest.mark.parametrize(("case", "before", "refused", "reason"), REFUSED, ids=[c[0] for c in REFUSED])
def test_each_illegal_order_or_cause_is_refused_and_nothing_of_it_is_staged(case, before, refused, reason) -> None:
    writer = opened()
    before(writer)
    payload, cause = refused(writer)
    staged = list(writer.events)
    with pytest.raises(EpisodeGrammarError, match=reason) as error:
        writer.add(payload, cause)  # type: ignore[arg-type]
    assert writer.events == staged, f"{case}: the refused event was staged"
    assert str(error.value).startswith(f"episode {STREAM}: {payload.type} refused: ")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("stream", "payload", "reason"),
    [
        (STREAM, Observation(step=1, url="u"), "starts with episode.started"),
        ("run/Ann_Lee_A1#2", started(), "not the stream's episode"),
        ("run/Bob_Ray_A1", episode_started(TASK, episode_id="Bob_Ray_A1", scheme=None), "not an attempt at task"),
    ],
)
def test_an_episode_starts_with_its_own_started_event(stream: str, payload, reason: str) -> None:
    writer = EpisodeWriter(stream)
    with pytest.raises(EpisodeGrammarError, match=reason):
        writer.add(payload)
    assert writer.events == []


def test_an_event_of_another_stream_is_refused_when_staged_from_elsewhere() -> None:
    other = EpisodeWriter("run/Ann_Lee_A1#2")
    other.add(started("Ann_Lee_A1#2"))
    writer = EpisodeWriter(STREAM)
    with pytest.raises(EpisodeGrammarError, match="belongs to stream run/Ann_Lee_A1#2"):
        writer.extend(other.events)


async def test_a_refused_event_never_reaches_the_store_and_the_episode_goes_on(store: EventStore) -> None:
    writer = EpisodeWriter(STREAM, store)
    writer.add(started())
    writer.add(Observation(step=1, url="https://www.bing.com/"))
    writer.add(act(1))
    with pytest.raises(EpisodeGrammarError):
        writer.add(Observation(step=1, url="https://www.kohls.com/"))
    await writer.flush()
    writer.add(Observation(step=2, url="https://www.kohls.com/"))
    finished(writer)
    with pytest.raises(EpisodeGrammarError):
        writer.add(act(3))
    await writer.flush()
    await writer.settle()
    stored = [(e.type, e.payload.get("url")) async for e in store.read_stream(STREAM)]
    assert stored == [
        ("episode.started", None),
        ("observation", "https://www.bing.com/"),
        ("action", None),
        ("observation", "https://www.kohls.com/"),
        ("episode.finished", None),
    ]


def test_the_orders_the_agent_and_the_importers_write_are_allowed() -> None:
    # the agent: pre-execution questions at step 0, then observe, plan, ask on demand, act; final state, end
    agent = opened()
    agent.add(planner_call(0))
    q = agent.add(query("size", step=0))
    r = agent.add(retrieval("size", step=0), q.event_id)
    agent.add(answer(step=0), r.event_id)
    agent.add(Rationale(step=0, source="planner", text="Rewritten task"))
    agent.add(Observation(step=1, url="https://www.bing.com/"))
    agent.add(planner_call(1))
    agent.add(act(1, "memory_access", "rating"))
    q = agent.add(query("rating"))
    r = agent.add(retrieval("rating"), q.event_id)
    agent.add(answer(), r.event_id)
    agent.add(Observation(step=2, url="https://www.kohls.com/"))
    agent.add(planner_call(2))
    agent.add(act(2, "stop", "done"))
    agent.add(capture(0))  # record --capture-links: the answer's product links, fetched at the end
    agent.add(capture(1))
    agent.add(FinalState(url="https://www.kohls.com/"))
    finished(agent)
    # an importer: memory accesses without a step first, steps with several actions, a runner-forced stop with
    # no final state; a crash record: nothing but the end
    imported = opened()
    q = imported.add(query(step=None))
    imported.add(retrieval(step=None), q.event_id)
    imported.add(Observation(step=1, url="u"))
    imported.add(Rationale(step=1, source="planner", text="Plan: find it"))
    imported.add(act(1))
    imported.add(act(1, "type", "5", "chinos", "1"))
    imported.add(EpisodeFinished(end_reason="max_steps", steps=1, detail="stopped by the runner's step limit"))
    crashed = opened()
    crashed.add(EpisodeFinished(end_reason="error", detail="Traceback"))
    # import-curation: the curated links' captures and the end, no steps
    curation = opened()
    curation.add(capture(0))
    curation.add(EpisodeFinished(end_reason="answered", answer="{}", steps=0))
    assert [len(w.events) for w in (agent, imported, crashed, curation)] == [19, 8, 2, 3]


def test_resume_closes_an_unfinished_attempt_without_knowing_its_events() -> None:
    closing = EpisodeWriter.closing("run/Ann_Lee_A1")
    closing.add(EpisodeFinished(end_reason="aborted", detail="unfinished when the run was resumed"))
    with pytest.raises(EpisodeGrammarError, match="has finished"):
        closing.add(EpisodeFinished(end_reason="aborted"))
    with pytest.raises(EpisodeGrammarError, match="history.query"):
        EpisodeWriter.closing("run/Ann_Lee_A1").add(retrieval(), "0" * 32)


def test_a_refusal_quotes_hostile_text_clipped_to_one_short_line() -> None:
    writer = opened()
    asked = writer.add(query("which size"))
    with pytest.raises(EpisodeGrammarError) as error:
        writer.add(retrieval("x" * 100_000), asked.event_id)
    assert "(100000 characters)" in str(error.value) and len(str(error.value)) < 300


def test_a_forked_episode_is_caused_by_its_fork_source_and_nothing_else() -> None:
    fork = ForkPoint(source_stream="source/Ann_Lee_A1", at_step=2, source_event_id="obs-2")
    forked = episode_started(TASK, episode_id="Ann_Lee_A1", scheme="on-demand", fork=fork)
    with pytest.raises(EpisodeGrammarError, match="caused by its fork's source event"):
        EpisodeWriter(STREAM).add(forked, causation_id="another-event")
    with pytest.raises(EpisodeGrammarError, match="caused by its fork's source event"):
        EpisodeWriter(STREAM).add(forked)
    writer = EpisodeWriter(STREAM)
    assert writer.add(forked, causation_id="obs-2").causation_id == "obs-2"
    with pytest.raises(EpisodeGrammarError, match="only a retrieval and a memory answer name a cause"):
        EpisodeWriter(STREAM).add(started(), causation_id="obs-2")


def test_a_copied_episode_names_only_its_source_events_as_causes() -> None:
    writer = EpisodeWriter.copying("run", "Ann_Lee_A1", frozenset({"src-start", "src-obs"}))
    writer.add(started(), causation_id="src-start")
    writer.add(Observation(step=1, url="https://www.bing.com/", title="Bing", ax_tree="0" * 64), causation_id="src-obs")
    with pytest.raises(EpisodeGrammarError, match="only a retrieval and a memory answer name a cause"):
        writer.add(planner_call(1), causation_id="not-a-source-event")
    q = writer.add(query())
    with pytest.raises(EpisodeGrammarError, match="not caused by a history.query"):
        writer.add(retrieval(), causation_id="src-obs")  # a retrieval keeps the in-episode rule
    writer.add(retrieval(), causation_id=q.event_id)
    assert [e.causation_id for e in writer.events[:2]] == ["src-start", "src-obs"]
