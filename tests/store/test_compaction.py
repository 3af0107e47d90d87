"""Recorded runs compact as they go (issue 37): `record` leaves each finished episode as segments, `p2w-rt compact`
does the same for a run recorded with `P2W_COMPACT=off`, both give the same run through every command, and a
compaction killed with SIGKILL at any moment loses and reorders nothing (docs/design/store.md, "Compaction").

Real processes: `p2w-rt record` on the demo sites in Chromium with the scripted LLM, `p2w-rt compact` killed -9.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_rt.schemas import uuid7
from p2w_runtime.domain import append_sealed
from p2w_runtime.store import open_store, verify_store
from p2w_runtime.store._segments import SPARSE_CODEC
from p2w_runtime.store.contract.compaction import reads
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.builders import episode, run_started
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.sample_llm import sample_agent_llm


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with raw_sqlite(db) as conn:
        return conn.execute(sql).fetchall()


def episode_rows(db: Path) -> int:
    """Event rows of episode streams (a run's own stream has no '/')."""
    return rows(db, "SELECT count(*) FROM events WHERE stream LIKE '%/%'")[0][0]


def command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args]


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    with sample_agent_llm() as server:
        yield server


def record(db: Path, llm: ScriptedLlm, label: str, **env: str) -> None:
    args = ["--db", str(db), "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
    args += ["--scheme", "on-demand", "--level", "2", "--limit", "3", "--concurrency", "2", "--label", label]
    done = subprocess.run(command(*args), cwd=db.parent, capture_output=True, env={**os.environ, **env}, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def seen_by_commands(db: Path, label: str) -> dict[str, str]:
    """What a researcher reads of a run: its listing, episodes, metrics, verification, and its exported bundle."""
    bundle = db.with_suffix(".p2w")
    assert cli(db, "export", label, "--output", str(bundle)).exit_code == 0
    out = {name: cli(db, *args).output for name, args in {
        "events": ("show", label, "--json"), "metrics": ("metrics", label, "--format", "json"),
        "verify": ("verify", label), "runs": ("runs", "--json"),
    }.items()}  # fmt: skip
    return out | {"bundle": bundle.read_bytes().hex()}


@pytest.mark.slow
def test_record_compacts_each_episode_and_compact_makes_a_run_of_rows_the_same(
    tmp_path: Path, llm: ScriptedLlm
) -> None:
    recorded = tmp_path / "recorded.db"
    record(recorded, llm, "as-recorded")
    assert episode_rows(recorded) == 0, "every finished episode became segments"
    codecs = {codec for (codec,) in rows(recorded, "SELECT codec FROM segments")}
    assert codecs and all(codec.startswith(SPARSE_CODEC) for codec in codecs)
    assert json.loads(cli(recorded, "verify", "--json").output)["ok"]

    kept = tmp_path / "kept.db"
    record(kept, llm, "kept", P2W_COMPACT="off")
    assert episode_rows(kept) > 0 and rows(kept, "SELECT count(*) FROM segments") == [(0,)]
    compacted = tmp_path / "compacted.db"
    shutil.copy(kept, compacted)
    first = cli(compacted, "compact", "kept")
    moved = int(first.output.splitlines()[-1].split()[1])
    assert first.exit_code == 0 and first.output.splitlines()[-1] == f"compacted {moved} events of 3 finished episodes"
    assert moved == rows(kept, "SELECT count(*) FROM events WHERE stream LIKE '%/%'")[0][0]
    assert episode_rows(compacted) == 0
    assert cli(compacted, "compact").output.splitlines()[-1] == "compacted 0 events of 3 finished episodes"
    assert seen_by_commands(compacted, "kept") == seen_by_commands(kept, "kept")


async def _interleaved_run(db: Path, episodes: int = 400, at_once: int = 10) -> None:
    """A finished run of ``episodes`` sealed episodes recorded ``at_once`` at a time, their steps interleaved."""
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, "interleaved")])
        for first in range(0, episodes, at_once):
            built = [episode(run_id, f"Task_{n:03d}_A1", steps=8) for n in range(first, first + at_once)]
            for start in range(0, max(len(events) for events, _ in built), 3):
                for events, blobs in built:
                    if start < len(events):
                        await append_sealed(store, events[start : start + 3], blobs if start == 0 else None)


async def _state(db: Path) -> tuple[dict[str, Any], bool]:
    """Every read of the store (events only of its counts: compaction may add the store's dictionary as a blob),
    and whether it verifies."""
    async with open_store(db) as store:
        seen = await reads(store)
        return {**seen, "count": seen["count"][0]}, (await verify_store(store)).ok


@pytest.mark.slow
def test_compact_killed_at_random_moments_loses_and_reorders_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "p2w.db"
    monkeypatch.setenv("P2W_COMPACT", "off")
    asyncio.run(_interleaved_run(db))
    before, ok = asyncio.run(_state(db))
    assert ok and episode_rows(db) > 0
    rng = random.Random(37)
    left = []
    for _ in range(6):
        proc = subprocess.Popen(command("--db", str(db), "compact"), cwd=tmp_path, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 3.0))  # its start-up, then 4-8 write transactions of 64 episodes
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert asyncio.run(_state(db)) == (before, True)
        left.append(episode_rows(db))
    finished = cli(db, "compact")
    assert finished.exit_code == 0 and episode_rows(db) == 0, (finished.output, left)
    assert asyncio.run(_state(db)) == (before, True)
