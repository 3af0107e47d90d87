"""The bundled sample personas: reproducible, in Persona2Web's formats, implicit yet retrievable, solvable on site."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from p2w_rt.schemas import KNOWN_ENTRY_TYPES, MemoryEntry
from p2w_runtime.data import TaskSet, load_memory_bank, load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import RunningSites, start_sites
from p2w_runtime.demo.sites.catalog import SEARCH_HOST, SITE_HOSTS, start_url
from p2w_runtime.retrieval import HistoryIndex, load_embedder
from tests.helpers.paths import REPO

REAL_TASKS = REPO / "tests" / "data" / "persona2web" / "tasks"
PAPER_EXACT_MATCH = 0.0356


@pytest.fixture(scope="module")
def tasks() -> TaskSet:
    return load_tasks(sample_tasks_dir())


@pytest.fixture(scope="module")
def banks() -> dict[str, list[MemoryEntry]]:
    return {path.stem: load_memory_bank(path) for path in sorted(sample_history_dir().glob("*.json"))}


def test_generator_rewrites_the_shipped_files_byte_for_byte(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate_sample.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert "verbatim" in result.stdout
    shipped = {p.relative_to(sample_history_dir().parent) for p in sample_history_dir().parent.rglob("*.json")}
    fresh = {p.relative_to(tmp_path) for p in tmp_path.rglob("*.json")}
    assert fresh == shipped
    for relative in shipped:
        assert (tmp_path / relative).read_bytes() == (sample_history_dir().parent / relative).read_bytes(), relative


def test_task_files_follow_persona2web_format_and_levels(tasks: TaskSet) -> None:
    real_keys = list(json.loads(next(REAL_TASKS.glob("personalization_1/*.json")).read_text()))
    by_set: dict[str, dict[int, object]] = {}
    for task in tasks.tasks.values():
        assert list(json.loads(task.path.read_text())) == real_keys
        assert task.file.intent.startswith("Query: ") and task.start_url == start_url()
        assert task.file.sites == [SEARCH_HOST]
        folder = 3 - task.level
        assert task.path.parent.name == f"personalization_{folder}" and task.task_id.endswith(str(folder))
        by_set.setdefault(task.query_set, {})[task.level] = task
    personas = Counter(name.rsplit("_", 1)[0] for name in by_set)
    assert len(personas) >= 4 and min(personas.values()) >= 3
    for query_set, levels in by_set.items():
        assert sorted(levels) == [0, 1, 2], query_set
        truth = levels[0].ground_truth
        assert truth.website in SITE_HOSTS[1:] and truth.preferences and truth.location and truth.location.zip
        assert re.match(rf"At {re.escape(truth.website)}, ", levels[0].intent)
        assert all(truth.website not in levels[n].intent for n in (1, 2)), "levels 1 and 2 mask the website"
        assert "**" not in levels[2].intent, "level 2 masks the preferences"
        assert all(f"**{p}**" in levels[1].intent for p in truth.preferences), "level 1 keeps the preferences"


def test_histories_cover_a_year_in_memory_bank_format(banks: dict[str, list[MemoryEntry]]) -> None:
    assert len(banks) >= 4
    for persona, entries in banks.items():
        raw = json.loads((sample_history_dir() / f"{persona}.json").read_text())
        assert list(raw) == ["memory_bank"]
        assert list(raw["memory_bank"][0]) == ["timestamp", "type", "object", "website"]
        assert 300 <= len(entries) <= 500, persona
        assert {e.type for e in entries} == set(KNOWN_ENTRY_TYPES)
        stamps = [dt.datetime.fromisoformat(e.timestamp) for e in entries]
        assert stamps == sorted(stamps) and (stamps[-1] - stamps[0]).days >= 330


def test_preference_values_rarely_appear_verbatim(tasks: TaskSet, banks: dict[str, list[MemoryEntry]]) -> None:
    pairs = verbatim = 0
    for task in tasks.tasks.values():
        if task.level != 2:
            continue
        objects = [e.object.lower() for e in banks[task.persona]]
        for value in task.ground_truth.preferences:
            pairs += 1
            verbatim += any(value.lower() in obj for obj in objects)
    ratio = verbatim / pairs
    print(f"\nexact-match ratio: {verbatim}/{pairs} = {ratio:.2%} (Persona2Web paper: {PAPER_EXACT_MATCH:.2%})")
    assert pairs >= 24 and ratio <= 0.10


def test_every_level2_website_and_preference_is_retrievable(
    tasks: TaskSet, banks: dict[str, list[MemoryEntry]]
) -> None:
    """Per level-2 task a plain history query surfaces (cosine >= 0.5, top 20) the behaviour revealing the answer.
    The banks' vectors come from the session's cache (``P2W_CACHE_DIR``) when the recordings before it made them."""
    embedder = load_embedder()
    indexes = {persona: HistoryIndex.open(entries, embedder) for persona, entries in banks.items()}
    checks = sample_checks()
    level2 = [t for t in tasks.tasks.values() if t.level == 2]
    assert {t.query_set for t in level2} == set(checks)
    failures = []
    for task in level2:
        check, truth, index = checks[task.query_set], task.ground_truth, indexes[task.persona]
        assert check["website"] == truth.website and [p["value"] for p in check["preferences"]] == truth.preferences
        shops = Counter(h.entry.website for h in index.search(check["website_query"]) if h.entry.website != SEARCH_HOST)
        if not shops or shops.most_common(1)[0][0] != truth.website:
            failures.append(f"{task.task_id}: website query {check['website_query']!r} -> {shops}")
        queries = [q.lower() for q in (check["website_query"], *(p["query"] for p in check["preferences"]))]
        assert not any(value.lower() in q for value in truth.preferences for q in queries), "queries must not cheat"
        for pref in check["preferences"]:
            hits = index.search(pref["query"], k=20, threshold=0.5)
            if not any(any(cue.lower() in h.entry.object.lower() for cue in pref["cues"]) for h in hits):
                failures.append(f"{task.task_id}: {pref['value']!r} not revealed by {pref['query']!r}")
    assert not failures, "\n".join(failures)


@pytest.fixture
async def sites() -> AsyncIterator[RunningSites]:
    running = await start_sites(0)
    yield running
    await running.stop()


async def test_demo_sites_hold_an_answer_for_every_query_set(sites: RunningSites) -> None:
    async with aiohttp.ClientSession() as http:
        for query_set, check in sample_checks().items():
            host, path = re.match(r"http://([^/]+)(/.*)", check["target_url"]).groups()
            assert host == check["website"]
            async with http.get(f"http://127.0.0.1:{sites.port}{path}", headers={"Host": host}) as response:
                page = await response.text()
            assert response.status == 200, query_set
            found = re.findall(r'data-(?:product|restaurant|event)-id="', page)
            assert found, f"{query_set}: {check['target_url']} lists nothing"
            if "/reserve?" in page or "data-restaurant-id" in page:
                assert "/reserve?" in page, f"{query_set}: no free table near the requested time"
