"""``show RUN TASK`` of a task no attempt of which finished (its recorder was killed) names each attempt as the
command takes it (``TASK#1``): it named the first one ``TASK``, which gives the same error again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_started


async def _killed_run(db: Path) -> None:
    episode = EpisodeBuilder("killed", "Ann_Lee_A1", query="find the usual chinos", level=2)
    episode.observation(1, "https://shop.example/1")  # no episode.finished: the recorder was killed
    async with open_store(db) as store:
        await store.append([run_started("killed", "killed")])
        await store.append(episode.events, episode.blobs)


def test_an_unfinished_task_names_its_attempts_as_show_takes_them(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    asyncio.run(_killed_run(db))
    refused = CliRunner().invoke(main, ["--db", str(db), "show", "killed", "Ann_Lee_A1"])
    assert refused.exit_code != 0 and "show an attempt by its number: Ann_Lee_A1#1" in refused.stderr
    shown = CliRunner().invoke(main, ["--db", str(db), "show", "killed", "Ann_Lee_A1#1"])
    assert shown.exit_code == 0, shown.output
    assert "episode.started" in shown.stdout and "https://shop.example/1" in shown.stdout
