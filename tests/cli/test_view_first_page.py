"""A run's first page kept as a summary row (``p2w_cli/view/_first_page.py``): a fresh viewer's first open of a
finished run shows what the page built from the whole run shows, reads no event to do so, and is rebuilt when
anything of the run changes (not when another run does), unless the writer brought it forward."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import sys
from pathlib import Path

import pydantic_core
import pytest

from p2w_cli.view._first_page import MODEL
from p2w_cli.view._links import ServerLinks
from p2w_cli.view._pages import ViewQueries, ViewState
from p2w_cli.view._problems import BadRequest
from p2w_cli.view._render import environment
from p2w_cli.view._run_page import RunPage
from p2w_cli.view._usage_kept import prices_key
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import EventStore, connect_store, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_started
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.view_app import fresh_open, fresh_runs
from tests.helpers.view_support import build_simple_run, drop_rows, log_end

pytestmark = pytest.mark.slow


@pytest.fixture
def db(demo_copy: Path) -> Path:
    return demo_copy


def html(db: Path, page: RunPage) -> str:
    return environment().get_template("run.html").render(links=ServerLinks(), source=db.name, p=page)


def stored_rows(db: Path) -> list[tuple[str, int]]:
    with raw_sqlite(db) as conn:
        return conn.execute("SELECT key, ordinal FROM summaries WHERE kind = ? ORDER BY key", (MODEL,)).fetchall()


def test_a_fresh_viewers_first_open_shows_the_page_built_from_the_whole_run(db: Path) -> None:
    built, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and [key for key, _ in stored_rows(db)] == [built.info.run_id]
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and not queries.reads.entries, "served from the row: the run was not read"
    assert pydantic_core.to_json(kept) == pydantic_core.to_json(built)  # what /api/run/earlier serves
    assert html(db, kept) == html(db, built)
    assert (kept.total, kept.matched, kept.pages) == (24, 24, 1)
    assert [r.episode_id for r in kept.shown] == [r.episode_id for r in built.shown] and len(kept.shown) == 24
    assert kept.judges and kept.metrics and kept.usage is not None and kept.usage.episodes.calls > 0
    assert any(row.judgments for row in kept.shown) and any(row.labels for row in kept.shown)


def test_only_the_first_page_of_a_long_run_is_kept_and_the_others_are_built(db: Path) -> None:
    asyncio.run(build_simple_run(db, "many", episodes=150))
    built, _ = fresh_open(db, "many")
    kept, queries = fresh_open(db, "many")
    assert queries.stored_pages == 1 and pydantic_core.to_json(kept) == pydantic_core.to_json(built)
    assert (kept.total, kept.matched, kept.pages, len(kept.shown)) == (150, 150, 2, 100)
    assert [r.episode_id for r in kept.shown] == [f"Persona{i:04d}_A1" for i in range(100)]
    second, queries = fresh_open(db, "many", {"page": "2"})
    assert queries.stored_pages == 0 and [r.episode_id for r in second.shown][:1] == ["Persona0100_A1"]
    assert len(second.shown) == 50


def test_a_page_built_from_the_whole_run_is_built_with_the_collector_paused(db: Path) -> None:
    """What the build makes is kept (the viewer's run read, its usage): the cyclic collector, paused meanwhile, does
    not rescan it again and again (at 10,000 episodes it took 40% of the open: docs/design/view.md). Only an
    allocation as a pause begins or ends may start one (the run read's and the usage's, two each); unpaused, a
    1,000-episode run's build set off 26 (none paused). The collector is on again after it."""
    asyncio.run(build_simple_run(db, "many", episodes=1000))
    building = {"read_run", "_usage", "run_page"}
    inside: list[bool] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            frame, names = sys._getframe(1), set()
            while frame is not None:
                names.add(frame.f_code.co_name)
                frame = frame.f_back
            inside.append(bool(names & building))

    gc.callbacks.append(seen)
    try:
        built, queries = fresh_open(db, "many")
    finally:
        gc.callbacks.remove(seen)
    assert queries.stored_pages == 0 and built.total == 1000
    assert inside and sum(inside) <= 4, f"{sum(inside)} collections set off while the page was built"
    assert gc.isenabled()


def unreadable_copy(db: Path, tmp_path: Path) -> Path:
    """A copy of ``db`` whose every event is unreadable (its summary rows kept)."""
    broken = tmp_path / "broken.db"
    with raw_sqlite(db) as source, sqlite3.connect(broken) as target:
        source.backup(target)
    with raw_sqlite(broken) as conn:
        for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f'DROP TRIGGER "{trigger}"')
        conn.execute("UPDATE events SET payload = '{broken', hash = 'x', prev_hash = 'x'")
        conn.execute("UPDATE segments SET data = x'00'")
    return broken


def test_the_first_open_reads_no_event(db: Path, tmp_path: Path) -> None:
    """Every event of the copy is made unreadable: its first page is still the original's, any other page fails."""
    before, _ = fresh_open(db, "earlier")
    broken = unreadable_copy(db, tmp_path)
    after, queries = fresh_open(broken, "earlier")
    assert queries.stored_pages == 1
    assert pydantic_core.to_json(after) == pydantic_core.to_json(before)
    with pytest.raises(pydantic_core.ValidationError):  # the same viewer reads the run for any other page
        fresh_open(broken, "earlier", {"sort": "task"})


def test_a_fresh_viewers_runs_page_reads_each_run_from_its_stored_first_page(db: Path, tmp_path: Path) -> None:
    """The runs page stores the first page of each run it reads; the next fresh viewer's runs page reads no event."""
    built, queries = fresh_runs(db)
    assert queries.stored_pages == 0 and len(stored_rows(db)) == len(built) > 1
    assert any(row.metrics for row in built)
    kept, queries = fresh_runs(unreadable_copy(db, tmp_path))
    assert queries.stored_pages == len(built) and not queries.reads.entries
    assert pydantic_core.to_json(kept) == pydantic_core.to_json(built)  # what /api/runs serves
    with pytest.raises(BadRequest, match="human:none"):  # a judge no run has, refused from the rows as before
        fresh_runs(unreadable_copy(db, tmp_path), "human:none")


def test_an_append_to_another_run_keeps_the_row_and_moves_it_to_the_log_end(db: Path) -> None:
    built, _ = fresh_open(db, "earlier")
    asyncio.run(build_simple_run(db, "other", episodes=3))
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and pydantic_core.to_json(kept) == pydantic_core.to_json(built)
    assert dict(stored_rows(db))[built.info.run_id] == log_end(db)


def post_label(db: Path, episode: str, *, keep: bool) -> None:
    """A label posted through the library, in a store opened by ``open_store`` (``keep``: it brings the kept read
    models forward as it closes) or by ``connect_store`` and closed by hand (it does not)."""

    async def label(store: EventStore) -> None:
        state = ViewState(db)
        state.stores[db.resolve()] = store
        await ViewQueries(state).label("earlier", episode, {"p_web": ["1"], "error": []}, "ana")

    async def post() -> None:
        if keep:
            async with open_store(db, create=False) as store:
                await label(store)
            return
        store = await connect_store(db, create=False)
        try:
            await label(store)
        finally:
            await store.close()

    asyncio.run(post())


def test_a_label_of_the_run_makes_its_first_page_stale_and_the_writer_brings_it_forward(db: Path) -> None:
    built, queries = fresh_open(db, "earlier")
    episode = built.shown[0].episode_id

    post_label(db, episode, keep=False)
    rebuilt, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0, "the run's judgments changed: the row was stale"
    assert "human:ana" in rebuilt.judges and "human:ana" not in built.judges, rebuilt.judges
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and pydantic_core.to_json(kept) == pydantic_core.to_json(rebuilt)

    post_label(db, built.shown[1].episode_id, keep=True)
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1, "open_store brought the row to the log's end as the label's store closed"
    assert dict(stored_rows(db))[kept.info.run_id] == log_end(db)
    drop_rows(db, MODEL)
    whole, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and pydantic_core.to_json(kept) == pydantic_core.to_json(whole)


def test_a_run_being_recorded_is_not_kept(db: Path) -> None:
    async def record() -> None:
        async with open_store(db) as store:
            await store.append([run_started("01live-run", "live")])
            b = EpisodeBuilder("01live-run", "Persona0000_A1", query="task")
            b.observation(1, "https://shop.example/0", title="page")
            b.action(1, "stop", "answer")
            b.finish("answered", "answer", final_url="https://shop.example/0", steps=1)
            await store.append(b.events, b.blobs)

    asyncio.run(record())
    page, _ = fresh_open(db, "live")
    again, queries = fresh_open(db, "live")
    assert page.live is not None and page.live.recording and page.total == 1
    assert queries.stored_pages == 0 and "01live-run" not in dict(stored_rows(db))


def test_another_price_table_rebuilds_the_row(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unpriced, _ = fresh_open(db, "earlier")
    assert unpriced.usage is not None and unpriced.usage.unpriced_models == ["scripted-gpt"]
    price = PriceTable.builtin().price("gpt-4o-mini")
    assert price is not None
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"scripted-gpt": {"input_per_1k": price.input_per_1k, "output_per_1k": 0.01}}))
    monkeypatch.setenv("P2W_PRICES", str(prices))
    prices_key.cache_clear()
    try:
        priced, queries = fresh_open(db, "earlier")
    finally:
        monkeypatch.delenv("P2W_PRICES")
        prices_key.cache_clear()
    assert queries.stored_pages == 0 and priced.usage is not None and priced.usage.unpriced_models == []


def test_a_stored_row_that_no_longer_reads_is_rebuilt(db: Path) -> None:
    built, _ = fresh_open(db, "earlier")
    with raw_sqlite(db) as conn:
        conn.execute("UPDATE summaries SET body = substr(body, 1, length(body) / 2) WHERE kind = ?", (MODEL,))
    again, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and pydantic_core.to_json(again) == pydantic_core.to_json(built)
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and pydantic_core.to_json(kept) == pydantic_core.to_json(built)
