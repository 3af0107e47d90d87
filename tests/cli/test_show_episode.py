"""``show RUN TASK`` reads an episode a chunk of events at a time and prints its timeline as it reads
(``EpisodeChunks``): the lines are those of the whole-episode timeline, a window of steps is a window of them, and
``--json`` streams the events as before. ``benchmarks/bench_show.py`` measures a 200,000-step episode."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

import p2w_runtime.domain.trajectory as trajectory_package
from p2w_cli.render.terminal import PIPE_WIDTH, cell
from p2w_rt.cli import main
from p2w_rt.replay.timeline import TimelineRow, timeline, timeline_rows
from p2w_rt.schemas import uuid7
from p2w_runtime.domain.trajectory import EpisodeChunks, _load, load_trajectory
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

STEPS = 12


async def _build(db: Path) -> str:
    run_id = uuid7()
    b = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find the usual chinos", level=1)
    q = b.history_query("what size?", phase="pre-execution")
    b.retrieval(q, "what size?", [])
    for step in range(1, STEPS + 1):
        b.observation(step, f"https://shop.example/p/{step}", title=f"page [{step}]")
        b.planner(step, f"step {step}: look further")
        b.action(step, "click", str(step))
    b.final_state("https://shop.example/p/12")
    b.finish("max_steps", answer="none", steps=STEPS)
    async with open_store(db) as store:
        await store.append([run_started(run_id, "long"), *b.events, run_finished(run_id, 1)], b.blobs)
    return b.stream


async def _timeline(db: Path, stream: str) -> list[TimelineRow]:
    async with open_store(db) as store:
        return timeline(await load_trajectory(store, stream))


def _rows(stdout: str) -> list[list[str]]:
    """The cells of each body line of the printed timeline table."""
    return [[c.strip() for c in line.strip("│").split("│")] for line in stdout.splitlines() if line.startswith("│")]


def _cells(rows: list[TimelineRow]) -> list[list[str]]:
    return [[str(r.seq), "-" if r.step is None else str(r.step), r.type, r.gist] for r in rows]


def _show(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), "show", "long", "Ann_Lee_A1", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def episode(tmp_path: Path) -> tuple[Path, str, list[TimelineRow]]:
    db = tmp_path / "p2w.db"
    stream = asyncio.run(_build(db))
    return db, stream, asyncio.run(_timeline(db, stream))


def test_a_short_episode_prints_the_table_it_always_did(episode: tuple[Path, str, list[TimelineRow]]) -> None:
    db, _, rows = episode
    table = Table("seq", "step", "event", "gist")
    for r in rows:
        table.add_row(str(r.seq), "-" if r.step is None else str(r.step), cell(r.type), cell(r.gist))
    drawn = io.StringIO()
    Console(file=drawn, width=PIPE_WIDTH, highlight=False, soft_wrap=True).print(table)
    out = _show(db)
    assert drawn.getvalue() in out
    assert "events " not in out  # the whole episode: no window line


def test_a_long_episode_is_streamed_a_chunk_at_a_time_with_the_same_lines(
    episode: tuple[Path, str, list[TimelineRow]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, stream, rows = episode
    monkeypatch.setattr(trajectory_package, "EPISODE_CHUNK", 5)  # what the command reads as "long"
    monkeypatch.setattr(_load, "EPISODE_CHUNK", 5)  # what a chunk holds before it is dropped
    out = _show(db)
    assert _rows(out) == _cells(rows)
    widths = {len(line) for line in out.splitlines() if line[:1] in "┏┃┡│└"}
    assert len(widths) == 1  # one table, its columns aligned across chunks

    async def chunked() -> list[TimelineRow]:
        async with open_store(db) as store:
            return [r async for r in timeline_rows(await EpisodeChunks.open(store, stream))]

    assert asyncio.run(chunked()) == rows


def test_a_window_of_steps_shows_those_steps_and_says_where_the_rest_is(
    episode: tuple[Path, str, list[TimelineRow]],
) -> None:
    db, _, rows = episode
    out = _show(db, "--from-step", "3", "--steps", "2")
    window = [r for r in rows if r.step in (3, 4)]
    assert _rows(out) == _cells(window)
    assert f"events {window[0].seq}-{window[-1].seq} of {rows[-1].seq}; more: --from-step 5" in out
    last = _show(db, "--from-step", str(STEPS))
    assert _rows(last) == _cells([r for r in rows if r.seq >= window[0].seq + 3 * (STEPS - 3)])
    assert _rows(last)[-1][2] == "episode.finished"  # the events after the last step belong to it
    assert _rows(_show(db, "--steps", "1")) == _cells([r for r in rows if r.step in (None, 1) and r.seq < 10])


@pytest.mark.parametrize("json_lines", [False, True])
def test_a_window_past_the_last_step_is_refused_in_one_line(
    episode: tuple[Path, str, list[TimelineRow]], json_lines: bool
) -> None:
    """As ``fork --at-step`` refuses a step the episode never reached: an empty window with "events 13-12 of 12"
    would read as an empty episode, and a script would take it for one."""
    db, _, _ = episode
    args = ["--db", str(db), "show", "long", "Ann_Lee_A1", "--from-step", str(STEPS + 1), *(["--json"] * json_lines)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        f"error: run 'long', task 'Ann_Lee_A1': the episode has {STEPS} step(s); --from-step {STEPS + 1} is past "
        "its end\n"
    )


def test_json_streams_every_event_or_the_window(episode: tuple[Path, str, list[TimelineRow]]) -> None:
    db, _, rows = episode
    events = [json.loads(line) for line in _show(db, "--json").splitlines()]
    assert [e["seq"] for e in events] == [r.seq for r in rows]
    assert events[0]["type"] == "episode.started" and events[-1]["payload"]["end_reason"] == "max_steps"
    window = [json.loads(line) for line in _show(db, "--json", "--from-step", "2", "--steps", "1").splitlines()]
    assert [e["payload"]["step"] for e in window] == [2, 2, 2]


def test_a_window_needs_a_task(episode: tuple[Path, str, list[TimelineRow]]) -> None:
    db, _, _ = episode
    result = CliRunner().invoke(main, ["--db", str(db), "show", "long", "--steps", "5"])
    assert result.exit_code == 2 and "--from-step and --steps need a TASK" in result.output


def test_show_and_the_viewer_start_a_step_where_the_same_rule_says(tmp_path: Path) -> None:
    """One step search for both (issue 38): a history query without a step between steps 2 and 3 opens step 3's
    window in ``show --from-step 3`` and is where the viewer's page of step 3 starts; a window past the last step
    still ends with the tail."""

    async def build() -> tuple[str, int]:
        run_id = uuid7()
        b = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find the usual chinos", level=1)
        for step in range(1, 5):
            if step == 3:
                b.history_query("which size again?")
            b.observation(step, f"https://shop.example/p/{step}")
            b.action(step, "click", str(step))
        b.final_state("https://shop.example/p/4")
        b.finish("max_steps", answer="none", steps=4)
        async with open_store(db) as store:
            await store.append([run_started(run_id, "long"), *b.events, run_finished(run_id, 1)], b.blobs)
            shape = await trajectory_package.episode_shape(store, b.stream)
            assert shape is not None
            return b.stream, await trajectory_package.first_seq_of_step(store, b.stream, 3, 2, shape.tail_from)

    db = tmp_path / "p2w.db"
    _, viewer_start = asyncio.run(build())
    window = [json.loads(line) for line in _show(db, "--json", "--from-step", "3", "--steps", "1").splitlines()]
    assert window[0]["type"] == "history.query" and window[0]["payload"]["step"] is None
    assert window[0]["seq"] == viewer_start and [e["payload"].get("step") for e in window[1:]] == [3, 3]
    last = [json.loads(line) for line in _show(db, "--json", "--from-step", "4", "--steps", "3").splitlines()]
    assert last[-1]["type"] == "episode.finished"
