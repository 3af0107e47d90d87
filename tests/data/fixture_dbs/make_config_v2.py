"""Writes config_v2.db, config_bad.db and config_v2.json: runs whose ``run.started`` config was an untyped dict,
kept so later code proves it still reads, verifies and re-writes them byte for byte (tests/schemas/test_run_config.py).

Run once, with the code of the time ``RunStarted.config`` was ``dict[str, Any]`` (schema version 2 of run.started),
from that checkout's root and with it first on the path:

    PYTHONPATH=$PWD python path/to/tests/data/fixture_dbs/make_config_v2.py

config_v2.db holds four runs, each ``run.started`` then ``run.finished``: the own agent's settings as ``record``
stored them, an outside agent's keys through the recording API's config (an integer where p2w-rt writes a
float), a run with an empty config, and one with the folder paths of a run recorded before runs carried their
dataset. config_bad.db holds one run whose config has a string where p2w-rt reads an integer (``max_steps``),
which that code took from any writer. config_v2.json pins each run's inputs and what that code stored.
Never regenerate them with newer code: that would test nothing.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROVENANCE = {
    "dataset_id": "persona2web@a5ba6e6919f1",
    "dataset_hash": "a5ba6e6919f1b7d331563ec893e0c9ebd59eccc65c0db464f8d65fd5b61f9417",
    "code_version": "0.1.0",
    "git_sha": None,
    "packages": {"p2w-rt": "0.1.0"},
    "host": "",
}
AGENT_SETTINGS = {
    "scheme": "on-demand", "max_steps": 25, "k": 20, "threshold": 0.5, "max_pre_queries": 5, "max_invalid": 3,
    "max_repeats": 3, "observation_chars": 12000, "page_timeout_s": 15.0, "capture_links": False,
    "har_bodies": False,
}  # fmt: skip
RUNS: dict[str, dict[str, Any]] = {
    "agent": {  # as ``record`` built it: AgentConfig, folder names, selection, how it ran
        "run_id": "0190a000-0000-7000-8000-00000000a001",
        "agent": "p2w-rt",
        "scheme": "on-demand",
        "config": {
            **AGENT_SETTINGS,
            "tasks_folder": "tasks",
            "history_folder": "history",
            "level": None,
            "task_ids": [],
            "limit": 2,
            "tasks": ["Jordan_Park_A1", "Mina_Okafor_A2"],
            "concurrency": 4,
            "base_url": "http://127.0.0.1:9/v1",
            "embedder": "default",
        },  # fmt: skip
    },
    "outside": {  # an outside agent's config through p2w_runtime.recording, which adds tasks and recorder
        "run_id": "0190a000-0000-7000-8000-00000000a002",
        "agent": "their-agent",
        "scheme": None,
        "config": {
            "temperature": 0.2,
            "tools": ["click", "type"],
            "nested": {"a": [1, 2.5, None, True]},
            "max_steps": 7,
            "threshold": 1,
            "page_timeout_s": 30,
            "tasks": ["Jordan_Park_A1"],
            "recorder": "p2w_runtime.recording",
        },  # fmt: skip
    },
    "empty": {"run_id": "0190a000-0000-7000-8000-00000000a003", "agent": "their-agent", "scheme": None, "config": {}},
    "legacy-paths": {
        "run_id": "0190a000-0000-7000-8000-00000000a004",
        "agent": "agentoccam",
        "scheme": "pre-execution",
        "config": {"tasks_dir": "/somewhere/tasks", "history_dir": "/somewhere/history", "model_tag": "gpt41"},
    },
}
BAD = {
    "bad": {
        "run_id": "0190a000-0000-7000-8000-00000000a005",
        "agent": "their-agent",
        "scheme": None,
        "config": {"max_steps": "ten", "tasks": ["Jordan_Park_A1"]},
    }
}


async def write(db: Path, runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    from p2w_runtime.domain import Provenance, RunSpec, start_run
    from p2w_runtime.store import head_digest, open_store

    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    facts: dict[str, Any] = {}
    async with open_store(db) as store:
        for label, run in runs.items():
            spec = RunSpec(label, run["agent"], "gpt-4.1", run["scheme"], Provenance(**PROVENANCE), run["config"])
            recording = await start_run(store, spec, run_id=run["run_id"])
            await recording.close()
            started = await store.read_event(run["run_id"], 1)
            assert started is not None
            facts[label] = {
                **run,
                "started_hash": started.hash,
                "started_payload": started.payload_json,
                "head_digest": await head_digest(store, run["run_id"]),
            }
    with sqlite3.connect(db) as conn:  # fold the WAL into the file: one file to commit
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return facts


def main() -> None:
    facts = {
        "provenance": PROVENANCE,
        "model": "gpt-4.1",
        "runs": asyncio.run(write(HERE / "config_v2.db", RUNS)),
        "bad": asyncio.run(write(HERE / "config_bad.db", BAD)),
    }
    for name in ("config_v2.db", "config_bad.db"):
        for suffix in ("-wal", "-shm"):
            Path(f"{HERE / name}{suffix}").unlink(missing_ok=True)
    (HERE / "config_v2.json").write_text(json.dumps(facts, indent=2) + "\n")


if __name__ == "__main__":
    main()
