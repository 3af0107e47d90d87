"""`p2w-rt history index` and `history search`: counts, hits, and one-line errors with a non-zero exit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.data import load_memory_bank
from p2w_runtime.demo.examples import example_paths
from p2w_runtime.retrieval import HistoryRetriever, load_embedder


@pytest.fixture
def history(tmp_path) -> Path:
    """A private copy of the example banks, so tests can add broken ones next to them."""
    folder = tmp_path / "history"
    folder.mkdir()
    for bank in example_paths().history_dir.glob("*.json"):
        (folder / bank.name).write_bytes(bank.read_bytes())
    return folder


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    monkeypatch.setenv("P2W_LOG_FILE", str(tmp_path / "log.jsonl"))
    monkeypatch.setenv("P2W_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()

    def _invoke(*args: str):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return _invoke


def test_index_encodes_once_then_serves_from_cache(invoke, history):
    banks = {p.stem: len(load_memory_bank(p)) for p in history.glob("*.json")}
    total = sum(banks.values())

    first = invoke("history", "index", "--history", str(history))
    assert first.exit_code == 0, first.stderr
    assert f"{len(banks)} personas, {total} entries: {total} encoded, 0 from cache" in first.stdout
    assert all(persona in first.stdout for persona in banks)

    second = invoke("history", "index", "--history", str(history))
    assert second.exit_code == 0, second.stderr
    assert f"{total} entries: 0 encoded, {total} from cache" in second.stdout


def test_cache_dir_option_wins_over_env(invoke, history, tmp_path):
    result = invoke("history", "index", "--history", str(history), "--cache-dir", str(tmp_path / "elsewhere"))
    assert result.exit_code == 0, result.stderr
    assert len(list((tmp_path / "elsewhere").iterdir())) == len(list(history.glob("*.json")))
    assert not (tmp_path / "cache").exists()


def test_search_json_matches_the_library(invoke, history, tmp_path):
    result = invoke(
        "history", "search", "Jordan_Park", "trail running shoes", "--history", str(history), "--k", "3", "--json"
    )
    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    index = HistoryRetriever(history, load_embedder(), tmp_path / "cache").index("Jordan_Park")
    expected = index.search("trail running shoes", k=3, threshold=0.5)
    assert index.encoded_count == 0  # the command left the cache warm
    assert printed["hits"] == [hit.to_retrieval_hit().model_dump(mode="json") for hit in expected]
    assert len(printed["hits"]) == 3
    assert (printed["model_id"], printed["index_hash"]) == ("all-MiniLM-L6-v2", index.index_hash)
    assert (printed["k"], printed["threshold"], printed["persona"]) == (3, 0.5, "Jordan_Park")


def test_search_table_and_threshold(invoke, history):
    result = invoke("history", "search", "Jordan_Park", "trail running shoes", "--history", str(history), "--k", "2")
    assert result.exit_code == 0, result.stderr
    assert "Jordan_Park: 2 of" in result.stdout and "Brooks" in result.stdout
    nothing = invoke("history", "search", "Jordan_Park", "shoes", "--history", str(history), "--threshold", "0.99")
    assert nothing.exit_code == 0
    assert "Jordan_Park: 0 of" in nothing.stdout
    hint = re.search(
        r"no entry reaches cosine 0\.99 \(the closest scores (0\.\d{3})\): lower --threshold", nothing.stderr
    )
    assert hint is not None, nothing.stderr
    assert float(hint.group(1)) < 0.99
    assert "lower --threshold" not in result.stderr, "no hint when there are hits"


@pytest.mark.parametrize(
    "args,bank,message",
    [
        (["search", "Nobody", "shoes"], None, "no memory bank for persona 'Nobody'"),
        (["search", "Broken", "shoes"], "{not json", "Broken.json: invalid JSON at line 1"),
        (["search", "Partial", "shoes"], '[{"timestamp": "t", "type": "purchase"}]', "Partial.json: entry [0]: object"),
        (["index"], "[]", "Empty.json: memory bank is empty"),
        (["search", "Jordan_Park", "shoes", "--embedder", "nobody/no-such-model"], None, "is not available offline"),
        (["search", "Jordan_Park", "  "], None, "history query is empty"),
    ],
    ids=["unknown-persona", "malformed-json", "invalid-entry", "empty-bank", "embedder-offline", "empty-query"],
)
def test_bad_input_is_one_line_and_exit_1(invoke, history, args, bank, message):
    if bank is not None:
        name = {"search": args[1] if len(args) > 1 else "", "index": "Empty"}[args[0]]
        (history / f"{name}.json").write_text(bank)
    result = invoke("history", args[0], *args[1:], "--history", str(history))
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr


def test_missing_history_dir(invoke, tmp_path):
    result = invoke("history", "index", "--history", str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {tmp_path / 'nowhere'}: history directory not found"


def test_history_defaults_to_the_bundled_sample(invoke):
    from p2w_runtime.data import list_personas
    from p2w_runtime.demo.sample import sample_history_dir

    persona = list_personas(sample_history_dir())[0]
    result = invoke("history", "search", persona, "favourite store", "--threshold", "-1", "--k", "4", "--json")
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    bank = load_memory_bank(sample_history_dir() / f"{persona}.json")
    assert len(hits) == 4
    assert all(bank[h["entry_id"]].model_dump(mode="json") == h["entry"] for h in hits)


def test_entries_are_printed_as_text_not_markup(invoke, history):
    entry = {"timestamp": "2024-05-01", "type": "purchase", "object": "[bold]wool socks[/bold] [2-pack]", "website": ""}
    (history / "Brackets.json").write_text(json.dumps([entry]))
    result = invoke("history", "search", "Brackets", "wool socks", "--history", str(history), "--threshold", "0")
    assert result.exit_code == 0, result.stderr
    assert "[bold]wool socks[/bold]" in result.stdout and "[2-pack]" in result.stdout
