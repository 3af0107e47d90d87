"""A running viewer brings a run it has read forward when only results about the run were appended since (a label
posted through it, a classification), rather than reading the whole run again (``p2w_cli/view/_run_cache.py``): the
page it then serves is the page a fresh viewer builds from the whole run. Anything else of the run appended (an
episode's event), or more than the limit, reads the run whole again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pydantic_core
import pytest

from p2w_cli.view import _run_cache
from p2w_cli.view._filters import parse_filter
from p2w_cli.view._pages import ViewQueries, ViewState
from p2w_cli.view._run_page import RunPage
from p2w_rt.replay.classify import classification_stream
from p2w_rt.replay.judges import judgment_stream
from p2w_rt.schemas import ErrorClassified, ErrorLabel, LlmCall, LlmUsage, NewEvent
from p2w_runtime.domain import EpisodeRef, episodes_of
from p2w_runtime.store import EventStore, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.view_app import fresh_open

pytestmark = pytest.mark.slow

Change = Callable[[EventStore, ViewQueries, list[EpisodeRef]], Awaitable[object]]


def built_fresh(db: Path) -> RunPage:
    """The run page a fresh viewer builds from the whole run (the kept first pages dropped first)."""
    with raw_sqlite(db) as conn:
        conn.execute("DELETE FROM summaries WHERE kind LIKE 'view.first-page%'")
    page, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and queries.reads.advanced == 0
    return page


def opened_after(db: Path, *changes: Change) -> tuple[list[RunPage], int]:
    """The run page one viewer serves after each change in turn (the first before any), and how many of its reads
    it brought forward."""

    async def go() -> tuple[list[RunPage], int]:
        state = ViewState(db)
        async with open_store(db) as store:
            state.stores[db.resolve()] = store
            queries = ViewQueries(state)
            pages = [await queries.run("earlier", *parse_filter({}))]
            refs = await episodes_of(store, pages[0].info.run_id)
            for change in changes:
                await change(store, queries, refs)
                pages.append(await queries.run("earlier", *parse_filter({})))
            return pages, queries.reads.advanced

    return asyncio.run(go())


async def label(store: EventStore, queries: ViewQueries, refs: list[EpisodeRef]) -> object:
    episode = refs[0].stream.rpartition("/")[2]
    return await queries.label("earlier", episode, {"p_web": ["0"], "error": []}, "ana")


def classify(label: str, first: int, last: int) -> Change:
    """Episodes ``first`` to ``last`` classified by a classifier the run has not seen, with ``label``: a second
    classification of an episode by it replaces the first's labels."""

    async def change(store: EventStore, queries: ViewQueries, refs: list[EpisodeRef]) -> object:
        run_id = refs[0].stream.partition("/")[0]
        events = [
            NewEvent(
                stream=classification_stream(run_id),
                payload=ErrorClassified(
                    episode_stream=ref.stream,
                    task_id=ref.task_id,
                    trajectory_hash=ref.hash,
                    classifier_id="by-hand",
                    classifier_version="1",
                    config_hash="c",
                    labels=[ErrorLabel(label=label, explanation="a test's label")],
                ),
            )
            for ref in refs[first : last + 1]
        ]
        return await store.append(events)

    return change


async def judge_call(store: EventStore, queries: ViewQueries, refs: list[EpisodeRef]) -> object:
    """An LLM judge's call appended to the run's judgments (a pass that stopped before its judgment): the run's
    derived usage moved, its rows did not."""
    call = LlmCall(
        role="judge",
        model="scripted-gpt",
        messages=[{"role": "user", "content": "judge this"}],
        response="{}",
        usage=LlmUsage(prompt_tokens=120, completion_tokens=8),
        latency_s=0.5,
        fingerprint="f",
        ordinal=0,
    )
    return await store.append([NewEvent(stream=judgment_stream(refs[0].stream.partition("/")[0]), payload=call)])


async def attempt(store: EventStore, queries: ViewQueries, refs: list[EpisodeRef]) -> object:
    """A new attempt at a task, finished: it counts now, and none of its results exist yet."""
    run_id, task = refs[0].stream.partition("/")[0], refs[0].task_id
    b = EpisodeBuilder(run_id, task, query="again", episode_id=f"{task}#2")
    b.observation(1, "https://shop.example/0", title="page")
    b.action(1, "stop", "answer")
    b.finish("answered", "answer", final_url="https://shop.example/0", steps=1)
    return await store.append(b.events, b.blobs)


def test_a_label_and_a_classification_bring_the_read_forward_to_the_page_built_whole(demo_copy: Path) -> None:
    pages, advanced = opened_after(demo_copy, label, classify("checked", 1, 2), classify("rechecked", 1, 1))
    assert advanced == 3, "every change was results only: the run was not read again"
    first, labelled, classified, reclassified = pages
    assert "human:ana" in labelled.judges and "human:ana" not in first.judges
    assert "checked" in classified.labels and "checked" not in labelled.labels
    assert {"checked", "rechecked"} <= set(reclassified.labels)  # the second episode keeps the first label
    assert pydantic_core.to_json(reclassified) == pydantic_core.to_json(built_fresh(demo_copy))


def test_an_llm_call_appended_moves_the_usage_of_a_read_brought_forward(demo_copy: Path) -> None:
    pages, advanced = opened_after(demo_copy, label, judge_call)
    assert advanced == 2
    before, after = (p.usage for p in pages[-2:])
    assert before is not None and after is not None
    assert after.derived.calls == before.derived.calls + 1
    assert after.episodes == before.episodes  # the counted episodes' usage as it was
    assert pydantic_core.to_json(pages[-1]) == pydantic_core.to_json(built_fresh(demo_copy))


def test_a_new_attempt_reads_the_run_again(demo_copy: Path) -> None:
    pages, advanced = opened_after(demo_copy, label, attempt)
    assert advanced == 1, "the label was brought forward, the new episode was not"
    assert pydantic_core.to_json(pages[-1]) == pydantic_core.to_json(built_fresh(demo_copy))
    assert "human:ana" in pages[-2].judges and "human:ana" not in pages[-1].judges, "the labelled attempt is replaced"


def test_labels_from_two_processes_at_once_while_a_viewer_runs(demo_copy: Path, tmp_path: Path) -> None:
    """Two ``import-labels`` processes label the run at the same time, each episode by its own annotator, while a
    viewer has the run open: the store verifies whole, and the viewer serves the page a fresh viewer builds without
    reading the run whole: from the first-page row the commands brought up to date as they ended
    (``p2w_cli/view/_refresh.py``), or, when the later refresh lost the race to write it, its read brought
    forward."""
    viewer: list[ViewQueries] = []

    async def both(store: EventStore, queries: ViewQueries, refs: list[EpisodeRef]) -> object:
        viewer.append(queries)
        files = []
        for annotator, part in (("ana", refs[0::2]), ("ben", refs[1::2])):
            path = tmp_path / f"{annotator}.csv"
            lines = [f"earlier,{ref.task_id},p_web,{n % 2},{annotator}" for n, ref in enumerate(part)]
            path.write_text("run,task,point,label,annotator\n" + "\n".join(lines) + "\n")
            files.append(path)
        with ThreadPoolExecutor(2) as pool:
            done = list(pool.map(lambda path: p2w_rt(demo_copy, "import-labels", str(path)), files))
        assert [r.returncode for r in done] == [0, 0], [r.stderr for r in done]
        return done

    pages, advanced = opened_after(demo_copy, both)
    assert advanced + viewer[0].stored_pages == 1 and {"human:ana", "human:ben"} <= set(pages[-1].judges)
    assert pydantic_core.to_json(pages[-1]) == pydantic_core.to_json(built_fresh(demo_copy))
    verified = p2w_rt(demo_copy, "verify", "--full")
    assert verified.returncode == 0 and "MISMATCH" not in verified.stdout, verified.stdout + verified.stderr


def test_more_than_the_limit_reads_the_run_again(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_run_cache, "ADVANCE_LIMIT", 1)  # the classification appends two events
    pages, advanced = opened_after(demo_copy, classify("checked", 1, 2))
    assert advanced == 0
    assert pydantic_core.to_json(pages[-1]) == pydantic_core.to_json(built_fresh(demo_copy))
