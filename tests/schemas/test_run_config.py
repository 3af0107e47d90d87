"""``RunStarted.config`` is a typed ``RunConfig`` that reads the dict earlier code stored and writes it back byte for
byte (docs/design/run-config.md).

The fixture databases were written by the code of the time the config was an untyped dict (``make_v1.py``,
``make_config_v2.py``) and are never regenerated; each test works on a copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from p2w_rt.schemas import GENESIS_HASH, NewEvent, RunConfig, RunStarted, StoredEvent, canonical_json
from p2w_runtime.agent import AgentConfig
from p2w_runtime.domain import BadRunStarted, Provenance, RunSpec, list_runs, run_started, start_run
from p2w_runtime.errors import UserError
from p2w_runtime.store import head_digest, open_store
from tests.helpers.paths import DATA, REPO

FIXTURES = DATA / "fixture_dbs"
FACTS = json.loads((FIXTURES / "config_v2.json").read_text())


def _copy(name: str, tmp_path: Path) -> Iterator[Path]:
    committed = FIXTURES / name
    before = hashlib.sha256(committed.read_bytes()).hexdigest()
    copy = tmp_path / name
    shutil.copyfile(committed, copy)
    yield copy
    assert hashlib.sha256(committed.read_bytes()).hexdigest() == before


@pytest.fixture(params=["v1.db", "config_v2.db"])
def old_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    yield from _copy(request.param, tmp_path)


@pytest.fixture
def bad_db(tmp_path: Path) -> Iterator[Path]:
    yield from _copy("config_bad.db", tmp_path)


def p2w(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line, in its own process, with this checkout first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    code = "import sys; from p2w_rt.cli import main; sys.argv[0] = 'p2w-rt'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "--db", str(db), *args], capture_output=True, text=True, env=env, timeout=120
    )


# -- (a) every fixture database of earlier schemas loads, verifies, and its config reads typed ---------------------
def test_old_databases_verify_through_the_cli(old_db: Path) -> None:
    done = p2w(old_db, "verify")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok:")


async def test_old_configs_read_typed(old_db: Path) -> None:
    async with open_store(old_db, create=False, read_only=True) as store:
        runs = {run.label: run.started.config for run in await list_runs(store)}
    if old_db.name == "v1.db":  # imported before runs carried their dataset: folder paths, the model's tag
        assert set(runs) == {"agentoccam", "browser-use"}
        for config in runs.values():
            assert config.model_tag == "gpt41" and config.given("tasks_dir") and config.history_dir is not None
            assert config.tasks is None and config.max_steps == 25 and AgentConfig.recorded(config) is None
        return
    agent, outside, empty, legacy = runs["agent"], runs["outside"], runs["empty"], runs["legacy-paths"]
    assert AgentConfig.recorded(agent) == AgentConfig()
    assert (agent.tasks, agent.limit, agent.level, agent.embedder) == (
        ["Jordan_Park_A1", "Mina_Okafor_A2"],
        2,
        None,
        "default",
    )
    assert agent.tasks_folder == "tasks" and agent.extra("concurrency") == 4
    # an outside agent's keys stay readable; a number keeps the type its writer gave
    assert outside.extra("temperature") == 0.2 and outside.extra("nested") == {"a": [1, 2.5, None, True]}
    assert outside.max_steps == 7 and outside.threshold == 1 and type(outside.threshold) is int
    assert outside.tasks == ["Jordan_Park_A1"] and outside.extra("recorder") == "p2w_runtime.recording"
    # nothing stored: every field reads as its default, stated once in RunConfig
    assert empty.stored() == {} and empty == RunConfig() and empty.max_steps == 25 and empty.tasks is None
    assert legacy.tasks_dir == "/somewhere/tasks" and legacy.model_tag == "gpt41"


async def test_old_databases_keep_their_digests(v2_db: Path) -> None:
    async with open_store(v2_db, create=False, read_only=True) as store:
        for label, run in FACTS["runs"].items():
            assert await head_digest(store, run["run_id"]) == run["head_digest"], label


def test_the_model_defaults_are_the_agents() -> None:
    """A setting a run's config leaves out reads as the default the agent records with: one set of defaults."""
    assert AgentConfig.recorded(RunConfig(max_steps=25)) == AgentConfig()


# -- (b) a config with an outside agent's keys round-trips byte for byte ----------------------------------------------
async def test_stored_configs_serialize_back_to_their_stored_bytes(old_db: Path) -> None:
    async with open_store(old_db, create=False, read_only=True) as store:
        runs = await list_runs(store)
        assert runs
        for run in runs:
            stored = await store.read_event(run.run_id, 1)
            assert stored is not None
            decoded = stored.decode_payload()
            again = NewEvent(event_id=stored.event_id, stream=stored.stream, payload=decoded, recorded_at=_at(stored))
            resealed = StoredEvent.seal(again, seq=stored.seq, prev_hash=stored.prev_hash)
            if stored.schema_version == RunStarted.SCHEMA_VERSION:  # v1's upcaster adds dataset and embedder
                assert resealed.payload_json == stored.payload_json
                assert resealed.hash == stored.hash
            else:
                assert canonical_json(decoded.model_dump(mode="json")["config"]) == canonical_json(
                    stored.payload["config"]
                )


def test_an_outside_agents_config_round_trips() -> None:
    config = {"temperature": 0.2, "seed": 7, "tools": {"browser": ["click"]}, "max_steps": 9, "page_timeout_s": 20}
    started = RunStarted(**_fields("r"), config=config)
    assert canonical_json(NewEvent(stream="r", payload=started).payload_dict()["config"]) == canonical_json(config)
    decoded = RunStarted.model_validate_json(started.model_dump_json())
    assert decoded == started and decoded.config.stored() == config
    assert decoded.config.extra("tools") == {"browser": ["click"]} and decoded.config.max_steps == 9


# -- (c) a wrong type in a known field: one line naming the run and the field ----------------------------------------
def test_a_wrong_type_stored_under_a_known_key_is_one_line(bad_db: Path) -> None:
    run_id = FACTS["bad"]["bad"]["run_id"]
    for command in (["runs"], ["show", "bad"], ["record", "--resume", "bad"]):
        done = p2w(bad_db, *command)
        assert done.returncode != 0, command
        (line,) = done.stderr.strip().splitlines()
        assert f"run 'bad' ({run_id})" in line and "config.max_steps holds 'ten'" in line, line
    # verify still checks its chain (intact) and names the payload's problem
    done = p2w(bad_db, "verify")
    assert done.returncode != 0
    assert "payload does not validate: run.started.config.max_steps" in done.stdout + done.stderr


async def test_a_wrong_type_is_refused_when_listed(bad_db: Path) -> None:
    async with open_store(bad_db, create=False, read_only=True) as store:
        with pytest.raises(BadRunStarted, match=r"config\.max_steps holds 'ten'"):
            await list_runs(store)
        stored = await store.read_event(FACTS["bad"]["bad"]["run_id"], 1)
        assert stored is not None and stored.compute_hash() == stored.hash == FACTS["bad"]["bad"]["started_hash"]


async def test_a_new_config_of_the_wrong_type_is_refused_in_one_line(tmp_path: Path) -> None:
    spec = RunSpec("theirs", "their-agent", "m", None, Provenance.synthetic("d"), {"seed": 1, "max_steps": "ten"})
    async with open_store(tmp_path / "new.db") as store:
        with pytest.raises(UserError) as refused:
            await start_run(store, spec)
        assert str(refused.value) == "run 'theirs': config field max_steps = 'ten': Input should be a valid integer"
        assert await store.count() == (0, 0)


# -- (d) a run.started written now hashes as the one earlier code wrote for the same inputs --------------------------
@pytest.fixture
def v2_db(tmp_path: Path) -> Iterator[Path]:
    yield from _copy("config_v2.db", tmp_path)


async def test_a_new_run_started_hashes_as_before(v2_db: Path) -> None:
    """The same inputs give the same payload bytes and, with the same id and time, the same event hash."""
    async with open_store(v2_db, create=False, read_only=True) as store:
        for label, run in FACTS["runs"].items():
            stored = await store.read_event(run["run_id"], 1)
            assert stored is not None
            new = run_started(run["run_id"], _spec(label, run))
            new = new.model_copy(update={"event_id": stored.event_id, "recorded_at": _at(stored)})
            sealed = StoredEvent.seal(new, seq=1, prev_hash=GENESIS_HASH)
            assert sealed.payload_json == run["started_payload"] == stored.payload_json, label
            assert sealed.hash == run["started_hash"] == stored.hash, label


async def test_a_new_run_is_stored_as_before(tmp_path: Path) -> None:
    """Through the store's own append (redaction included), the stored payload is what earlier code stored."""
    async with open_store(tmp_path / "new.db") as store:
        for label, run in FACTS["runs"].items():
            await start_run(store, _spec(label, run), run_id=run["run_id"])
            stored = await store.read_event(run["run_id"], 1)
            assert stored is not None and stored.payload_json == run["started_payload"], label


def _spec(label: str, run: dict[str, Any]) -> RunSpec:
    provenance = Provenance(**FACTS["provenance"])
    return RunSpec(label, run["agent"], FACTS["model"], run["scheme"], provenance, run["config"])


def _at(stored: StoredEvent) -> datetime:
    return datetime.fromisoformat(stored.recorded_at.replace("Z", "+00:00"))


def _fields(run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id, "label": "l", "agent": "theirs", "backbone_model": "m", "dataset_id": "d",
        "dataset_hash": "h", "code_version": "0",
    }  # fmt: skip
