"""Several processes on one database: labels are unique, imports and judging passes are not done twice.

The races are real: separate ``p2w-rt`` processes started together on one file (issue 12).
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.judges import read_judgments
from p2w_rt.schemas import GroundTruth, MemoryEntry, uuid7
from p2w_runtime.domain import find_run, list_runs
from p2w_runtime.store import ClaimHolder, LabelTaken, export_bundle, hold_claims, open_store, verify_store
from p2w_runtime.testing import Delay, ScriptedLlm, Text
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.paths import DATA
from tests.helpers.raw_sqlite import raw_sqlite

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32", "$70"])
REAL_TASKS = DATA / "persona2web" / "tasks"
TASKS = [f"Alex_Garcia_{kind}{n}" for kind in "AB" for n in (1, 2, 3)]


def _together(commands: list[list[str]], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start every command before waiting for any: the processes race for the same database."""
    procs = [subprocess.Popen(c, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
    done = []
    for command, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done


async def _build(db: Path, label: str, tasks: list[str] = TASKS) -> str:
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, label, agent="agentoccam", model="gpt-4.1", scheme="on-demand")])
        for task in tasks:
            b = EpisodeBuilder(run_id, task, query="Find chinos", ground_truth=TRUTH, level=2)
            q = b.history_query("size?", step=1)
            entries = [MemoryEntry(timestamp="t", type="purchase", object="chinos 32x32", website="kohls.com")]
            b.memory_answer(b.retrieval(q, "size?", entries, step=1), "budget $70", step=1)
            b.observation(2, "https://www.kohls.com/search?q=chinos+32x32")
            b.action(2, "type", "1", "chinos 32x32 under $70", "1")
            b.action(3, "stop", "Chinos at $59")
            b.finish("answered", "Chinos at $59", steps=3)
            await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, len(tasks))])
    return run_id


def _trajectories(root: Path, episodes: int = 60) -> tuple[Path, Path, list[str]]:
    """Browser-Use trajectories of real level-0 tasks: enough files that checking them all takes a while, so the
    importers started together are all between "is the label free?" and "create the run" at once."""
    history, trajectories = root / "history", root / "trajectories"
    history.mkdir()
    trajectories.mkdir()
    task_ids = sorted(p.stem for p in (REAL_TASKS / "personalization_3").glob("*.json"))[:episodes]
    for persona in {t.rsplit("_", 1)[0] for t in task_ids}:
        bank = [{"timestamp": "2025-01-01T10:00:00", "type": "web visit", "object": "item", "website": "s.com"}]
        (history / f"{persona}.json").write_text(json.dumps({"memory_bank": bank * 30}))
    for task_id in task_ids:
        steps = [
            {"step": 1, "url": "https://www.bing.com/", "step_type": "memory", "current_observation": "Bing.",
             "memory_reason": "taste?", "memory_query": task_id, "retrieved_memory_indices": [1, 2],
             "memory_answer": "item 1"},
            {"step": 2, "url": "https://s.com/done", "step_type": "navigation", "reason": "found it",
             "actions": [{"action": "done", "text": f"answer for {task_id}"}]},
        ]  # fmt: skip
        (trajectories / f"on_gpt41_{task_id}.json").write_text(json.dumps(steps))
    return history, trajectories, task_ids


def _rubric_reply(request: dict) -> str:
    props = request["response_format"]["json_schema"]["schema"]["properties"]
    top = {"web": 5, "pref": 2.5, "intent": 10}
    return json.dumps({k: {"score": top[k.split("_")[0]], "justification": "ok"} for k in props})


# -- labels -------------------------------------------------------------------------------------------------


def test_four_concurrent_imports_under_one_label_make_one_run_with_each_episode_once(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    history, trajectories, task_ids = _trajectories(tmp_path)
    asyncio.run(_build(db, "earlier", TASKS[:1]))  # an existing database (a new file staggers the starts)
    command = [P2W_RT, "--db", str(db), "import-trajectories", "--format", "p2w-browser-use", "--tasks"]
    command += [str(REAL_TASKS), "--history", str(history), "--label", "shared", str(trajectories)]
    done = _together([command] * 4, tmp_path)
    assert [d.returncode for d in done] == [0] * 4, [d.stderr for d in done]
    verbs = Counter(d.stdout.split()[0] for d in done)
    assert verbs == {"created": 1, "resumed": 3}

    async def check() -> tuple[list[str], Counter[str], bool]:
        async with open_store(db, create=False) as store:
            labels = [r.label for r in await list_runs(store)]
            started = Counter[str]()
            async for event in store.read_all(types=["episode.started"]):
                started[event.stream] += 1
            return labels, started, (await verify_store(store)).ok

    labels, started, ok = asyncio.run(check())
    assert labels == ["earlier", "shared"]
    assert len(started) == len(task_ids) + 1 and set(started.values()) == {1}  # every episode, each once
    assert ok


async def test_two_writers_racing_for_one_label_one_wins_the_other_is_told_which_run_has_it(tmp_path: Path) -> None:
    db = tmp_path / "race.db"
    async with open_store(db) as first, open_store(db) as second:
        ids = [uuid7(), uuid7()]
        results = await asyncio.gather(
            *(
                store.append([run_started(run_id, "same", agent="a", model="m")])
                for store, run_id in zip((first, second), ids, strict=True)
            ),
            return_exceptions=True,
        )
        (lost,) = [r for r in results if isinstance(r, BaseException)]
        winner = ids[results.index(next(r for r in results if not isinstance(r, BaseException)))]
        assert isinstance(lost, LabelTaken)
        assert f"label 'same' is already used by run {winner}" in str(lost)
        assert [r.run_id for r in await list_runs(first)] == [winner]


def test_bundle_import_refuses_a_second_run_under_a_taken_label_in_one_line(tmp_path: Path) -> None:
    here, there, bundle = tmp_path / "here.db", tmp_path / "there.db", tmp_path / "run.p2w"
    kept = asyncio.run(_build(here, "nightly", TASKS[:1]))
    asyncio.run(_build(there, "nightly", TASKS[:2]))

    async def export() -> None:
        async with open_store(there) as store:
            run = await find_run(store, "nightly")
            await export_bundle(store, run.run_id, bundle)

    asyncio.run(export())
    result = CliRunner().invoke(main, ["--db", str(here), "import", str(bundle)])
    assert result.exit_code != 0
    assert result.stderr.strip().splitlines() == [
        f"error: {bundle}: label 'nightly' is already used by run {kept} in {here}, and an imported run keeps its "
        "label: import the bundle into another database (--db)"
    ]

    async def runs() -> list[tuple[str, int]]:
        async with open_store(here) as store:
            return [(r.run_id, r.episodes) for r in await list_runs(store)]

    assert asyncio.run(runs()) == [(kept, 1)]  # nothing of the refused bundle, nothing of ours lost


def test_a_database_made_before_labels_were_unique_still_opens_with_its_duplicates(tmp_path: Path) -> None:
    """The migration: the old file gets the label table on first open; duplicates stay, new ones are refused."""
    old, other = tmp_path / "old.db", tmp_path / "other.db"
    first = asyncio.run(_build(old, "dup", TASKS[:1]))
    second = asyncio.run(_build(other, "dup", TASKS[:2]))
    with raw_sqlite(old) as conn:  # what a database of the previous version holds: two runs labelled "dup"
        conn.execute("DROP TABLE run_labels")
        conn.execute("ATTACH DATABASE ? AS other", (str(other),))
        columns = "event_id, stream, seq, type, schema_version, recorded_at, causation_id, payload, blobs, " + (
            "prev_hash, hash"
        )
        conn.execute(f"INSERT INTO events ({columns}) SELECT {columns} FROM other.events ORDER BY position")
        conn.execute("INSERT INTO blobs SELECT * FROM other.blobs WHERE sha256 NOT IN (SELECT sha256 FROM blobs)")

    async def reopen() -> tuple[list[tuple[str, str]], BaseException | None]:
        async with open_store(old, create=False) as store:
            runs = [(r.run_id, r.label) for r in await list_runs(store)]
            try:
                await store.append([run_started(uuid7(), "dup", agent="a", model="m")])
            except LabelTaken as exc:
                return runs, exc
            return runs, None

    runs, refused = asyncio.run(reopen())
    assert runs == [(first, "dup"), (second, "dup")]
    assert isinstance(refused, LabelTaken) and first in str(refused)
    assert CliRunner().invoke(main, ["--db", str(old), "verify"]).exit_code == 0


# -- judging passes -----------------------------------------------------------------------------------------


def test_four_concurrent_llm_replays_judge_each_episode_exactly_once(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    # each reply takes long enough that the first pass still holds its claim when the last process starts,
    # however slowly a loaded machine starts four interpreters
    scripted_llm.handle_with(lambda request: Delay(1.5, Text(_rubric_reply(request))))
    db = tmp_path / "judged.db"
    run_id = asyncio.run(_build(db, "to-judge"))
    command = [P2W_RT, "--db", str(db), "replay", "to-judge", "--judge", "rubric-llm"]
    command += ["--base-url", scripted_llm.base_url, "--api-key", "k", "--concurrency", "2", "--json"]
    done = _together([command] * 4, tmp_path)
    assert [d.returncode for d in done] == [0] * 4, [d.stderr for d in done]
    assert len(scripted_llm.chat_requests) == len(TASKS)  # paid once per episode, not four times

    async def judgments() -> Counter[str]:
        async with open_store(db, create=False) as store:
            return Counter(r.judgment.episode_stream for r in await read_judgments(store, run_id))

    assert asyncio.run(judgments()) == {f"{run_id}/{task}": 1 for task in TASKS}
    for d in done:  # every process reports every episode: judged by itself or cached from the one that did
        rows = [json.loads(line) for line in d.stdout.splitlines() if line.startswith("{")]
        assert sorted(r["task_id"] for r in rows) == sorted(TASKS)
    assert sum("waiting for another pass" in d.stderr for d in done) >= 1


async def test_a_claim_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    db = tmp_path / "claims.db"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    async with open_store(db) as store:
        ghost = ClaimHolder("ghost", socket.gethostname(), int(dead.stdout), 0.0)
        assert await store.try_claim("judge/x", ghost) is None
        waited: list[str] = []
        async with asyncio.timeout(5):
            async with hold_claims(store, ["judge/x"], on_wait=lambda key, holder: waited.append(key)):
                pass
        assert waited == []  # the dead holder is not waited on


def test_recording_under_a_taken_label_is_refused_before_anything_is_called(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    db = tmp_path / "p2w.db"
    kept = asyncio.run(_build(db, "december", TASKS[:1]))
    args = ["--db", str(db), "record", "--model", "scripted-model", "--base-url", scripted_llm.base_url]
    args += ["--api-key", "k", "--tasks", "sample", "--history", "sample", "--scheme", "no-history"]
    result = CliRunner().invoke(main, [*args, "--label", "december", "--limit", "1"])
    assert result.exit_code != 0
    assert result.stderr.strip().splitlines() == [
        f"error: label 'december' is already used by run {kept} in {db}; choose another"
    ]
    assert scripted_llm.requests == []
    listed = CliRunner().invoke(main, ["--db", str(db), "runs", "--json"]).output.splitlines()
    assert [(json.loads(line)["run_id"], json.loads(line)["episodes"]) for line in listed] == [(kept, 1)]


def test_four_concurrent_llm_classify_passes_call_the_model_once_per_episode(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    scripted_llm.handle_with(lambda request: Delay(0.3, Text('{"labels": []}')))
    db = tmp_path / "classified.db"
    asyncio.run(_build(db, "to-classify"))
    command = [P2W_RT, "--db", str(db), "classify", "to-classify", "--classifier", "llm", "--model", "gpt-4.1"]
    done = _together([[*command, "--base-url", scripted_llm.base_url, "--api-key", "k"]] * 4, tmp_path)
    assert [d.returncode for d in done] == [0] * 4, [d.stderr for d in done]
    assert len(scripted_llm.chat_requests) == len(TASKS)
    assert sorted(d.stderr.count(f"classified {len(TASKS)}, cached 0") for d in done) == [0, 0, 0, 1]


def test_a_replay_killed_with_sigkill_does_not_block_the_next_one(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    hang = {"on": True}
    scripted_llm.handle_with(lambda request: Delay(60 if hang["on"] else 0, Text(_rubric_reply(request))))
    db = tmp_path / "killed.db"
    run_id = asyncio.run(_build(db, "to-judge", TASKS[:2]))
    command = ["replay", "to-judge", "--judge", "rubric-llm", "--base-url", scripted_llm.base_url, "--api-key", "k"]
    proc = subprocess.Popen([P2W_RT, "--db", str(db), *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not scripted_llm.chat_requests and time.monotonic() < deadline:  # it holds the claim and waits on us
            time.sleep(0.1)
        assert scripted_llm.chat_requests, "the first replay never called the judge"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with raw_sqlite(db) as conn:
        assert conn.execute("SELECT pid FROM claims").fetchall() == [(proc.pid,)]  # left behind by the kill
    hang["on"] = False
    started = time.monotonic()
    result = CliRunner().invoke(main, ["--db", str(db), *command])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 60

    async def judged() -> int:
        async with open_store(db, create=False) as store:
            return len(await read_judgments(store, run_id))

    assert asyncio.run(judged()) == 2
