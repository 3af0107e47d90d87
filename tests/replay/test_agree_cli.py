"""`p2w-rt import-labels` and `p2w-rt agree` end to end on a real store: LLM vs rules, humans, drift, samples."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.agreement import cohen_kappa
from p2w_rt.replay.judges import judgment_stream, read_judgments
from p2w_rt.schemas import GroundTruth, Judgment, MemoryEntry, NewEvent, uuid7
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32", "$70"])
TASKS = ("Alex_Garcia_A3", "Alex_Garcia_A1", "Alex_Garcia_B1", "Alex_Garcia_C1")


async def _build(db: Path) -> str:
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, "agree-run", agent="agentoccam", model="m", scheme="on-demand")])
        for n, task in enumerate(TASKS):
            b = EpisodeBuilder(run_id, task, query="Find chinos", ground_truth=TRUTH, level=0)
            if n % 2 == 0:  # the rules find the preferences only where memory named them
                q = b.history_query("size?", step=1)
                entries = [MemoryEntry(timestamp="t", type="purchase", object="chinos 32x32", website="kohls.com")]
                b.memory_answer(b.retrieval(q, "size?", entries, step=1), "budget $70", step=1)
                b.observation(2, "https://www.kohls.com/search?q=chinos+32x32+under+$70")
            else:
                b.observation(2, "https://www.kohls.com/search?q=chinos")
            if task == "Alex_Garcia_B1":
                b.finish("max_steps", steps=25)
            else:
                b.action(3, "stop", "Chinos 32x32 at $59 on kohls.com")
                b.finish("answered", "Chinos 32x32 at $59 on kohls.com", steps=3)
            await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, len(TASKS))])
    return run_id


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def full_marks(request: dict) -> str:
    props = request["response_format"]["json_schema"]["schema"]["properties"]
    top = {"web": 5, "pref": 2.5, "intent": 10}
    return json.dumps({k: {"score": top[k.split("_")[0]], "justification": "ok"} for k in props})


def judgments(db: Path, run_id: str) -> list[Judgment]:
    async def read() -> list[Judgment]:
        async with open_store(db) as store:
            return [r.judgment for r in await read_judgments(store, run_id)]

    return asyncio.run(read())


@pytest.fixture
def judged(tmp_path: Path, scripted_llm: ScriptedLlm) -> tuple[Path, str, ScriptedLlm]:
    db = tmp_path / "a.db"
    run_id = asyncio.run(_build(db))
    scripted_llm.handle_with(full_marks)
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k")
    code, _, err = invoke(db, "replay", "agree-run", "--judge", "rubric-llm", "--judge", "rubric-rules", *llm)
    assert code == 0, err
    return db, run_id, scripted_llm


def success_by(js: list[Judgment], judge_id: str) -> dict[str, float]:
    return {j.task_id: j.metrics["success"] for j in js if j.judge_id == judge_id}


def test_llm_against_rules(judged: tuple[Path, str, ScriptedLlm]) -> None:
    db, run_id, _ = judged
    code, out, err = invoke(db, "agree", "agree-run", "--judge", "rubric-llm", "--judge", "rubric-rules", "--json")
    assert code == 0, err
    report = json.loads(out)
    (pair,) = report["pairs"]
    assert (pair["a"], pair["b"], pair["episodes"]) == ("rubric-llm", "rubric-rules", 4)
    llm, rules = success_by(judgments(db, run_id), "rubric-llm"), success_by(judgments(db, run_id), "rubric-rules")
    expected_changed = sorted(t for t in TASKS if llm[t] != rules[t])
    assert expected_changed, "fixture must make the judges disagree somewhere"
    assert sorted(c["task"] for c in pair["changed_verdicts"]) == expected_changed
    items = {i["item"]: i for i in pair["items"]}
    assert list(items)[:5] == ["metric:intent", "metric:p_avg", "metric:p_pref", "metric:p_web", "metric:success"]
    success = items["metric:success"]
    assert success["changed"] == len(expected_changed)
    assert success["accuracy"]["value"] == pytest.approx(1 - len(expected_changed) / 4)
    kappa = cohen_kappa([llm[t] for t in TASKS], [rules[t] for t in TASKS])
    assert success["kappa"]["value"] == (None if kappa != kappa else pytest.approx(kappa))
    assert "point:web.retrieval" in items and "dimension:pref" in items
    code, table, _ = invoke(db, "agree", "agree-run", "--judge", "rubric-llm", "--judge", "rubric-rules")
    assert code == 0 and "Cohen κ" in table and "success verdict changed on" in table


def test_human_labels_imported_once_and_compared(judged: tuple[Path, str, ScriptedLlm], tmp_path: Path) -> None:
    db, run_id, _ = judged
    rules = success_by(judgments(db, run_id), "rubric-rules")
    rows = ["run,task,point,label,annotator"]
    for n, task in enumerate(TASKS):
        rows.append(f"agree-run,{task},success,{'yes' if rules[task] else 'no'},alice")  # alice agrees with the rules
        bob = rules[task] if n else 1 - rules[task]  # bob disagrees on the first task
        rows.append(f"agree-run,{task},success,{bob:g},bob")
        rows.append(f"agree-run,{task},pref.0,{n % 2},carol")
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(rows) + "\n")
    code, out, err = invoke(db, "import-labels", str(labels))
    assert code == 0, err
    assert out.strip() == "12 labels: 12 judgments written, 0 already there"
    code, out, _ = invoke(db, "import-labels", str(labels))
    assert out.strip() == "12 labels: 0 judgments written, 12 already there"
    humans = [j for j in judgments(db, run_id) if j.judge_id.startswith("human:")]
    assert len(humans) == 12 and {j.judge_version for j in humans} == {"labels"}
    code, out, err = invoke(db, "agree", "agree-run", "--judge", "rubric-rules", "--human", "--json")
    assert code == 0, err
    pairs = {(p["a"], p["b"]): p for p in json.loads(out)["pairs"]}
    alice = {i["item"]: i for i in pairs[("rubric-rules", "human:alice")]["items"]}
    assert alice["metric:success"]["accuracy"]["value"] == 1.0 and alice["metric:success"]["changed"] == 0
    bob = {i["item"]: i for i in pairs[("human:alice", "human:bob")]["items"]}
    assert bob["metric:success"]["accuracy"]["value"] == 0.75
    assert [c["task"] for c in pairs[("human:alice", "human:bob")]["changed_verdicts"]] == [TASKS[0]]
    # three annotators: alpha among them, per item they share (carol labelled only pref.0, alone)
    groups = {g["item"]: g for g in json.loads(out)["annotators"]}
    assert groups["metric:success"]["units"] == 4 and "point:pref.0" not in groups


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run,task,point,label\n", "header lacks column 'annotator'"),
        ("run,task,point,label,annotator\nagree-run,Alex_Garcia_A3,success,maybe,a\n", ":2: field 'label'"),
        ("run,task,point,label,annotator\nagree-run,Nobody_X1,success,1,a\n", "no counted episode 'Nobody_X1'"),
        ("run,task,point,label,annotator\nno-such-run,Alex_Garcia_A3,success,1,a\n", ":2: field 'run'"),
        ("run,task,point,label,annotator\nagree-run,Alex_Garcia_A3,,1,a\n", "field 'point' is missing"),
        ("run,task,point,label,annotator\nagree-run,Alex_Garcia_A3,success,7,a\n", "outside 0..1.0"),
        (
            "run,task,point,label,annotator\nagree-run,Alex_Garcia_A3,success,1,a\nagree-run,Alex_Garcia_A3,success,0,a\n",
            "labelled success twice, differently",
        ),
    ],
)
def test_bad_label_files_record_nothing(
    judged: tuple[Path, str, ScriptedLlm], tmp_path: Path, text: str, message: str
) -> None:
    db, run_id, _ = judged
    before = len(judgments(db, run_id))
    # a good row first: nothing of the file may land when a later row is bad
    path = tmp_path / "bad.csv"
    path.write_text(text)
    code, out, err = invoke(db, "import-labels", str(path))
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1 and str(path) in err
    assert len(judgments(db, run_id)) == before


def test_json_lines_labels(judged: tuple[Path, str, ScriptedLlm], tmp_path: Path) -> None:
    db, run_id, _ = judged
    path = tmp_path / "labels.jsonl"
    rows = [{"run": "agree-run", "task": t, "point": "success", "label": True, "annotator": "dana"} for t in TASKS]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{not json\n")
    code, _, err = invoke(db, "import-labels", str(path))
    assert code == 1 and f"{path}:5: not JSON" in err
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert invoke(db, "import-labels", str(path))[0] == 0
    assert {j.task_id for j in judgments(db, run_id) if j.judge_id == "human:dana"} == set(TASKS)


def test_judge_drift_between_versions(judged: tuple[Path, str, ScriptedLlm]) -> None:
    db, run_id, _ = judged
    now = [j for j in judgments(db, run_id) if j.judge_id == "rubric-llm"]

    async def add_old_version() -> None:
        # what an older rubric-llm recorded on the same trajectories: it withheld a preference point on the first task
        async with open_store(db) as store:
            events = []
            for j in now:
                old = j.model_copy(update={"judge_version": "1", "config_hash": "old"})
                if j.task_id == TASKS[0]:
                    points = {**j.points, "pref.1.retrieval": 0.0}
                    old = old.model_copy(update={"points": points, "metrics": {**j.metrics, "success": 0.0}})
                events.append(NewEvent(stream=judgment_stream(run_id), payload=old))
            await store.append(events)

    asyncio.run(add_old_version())
    code, out, err = invoke(db, "agree", "agree-run", "--judge", "rubric-llm@1", "--judge", "rubric-llm@2", "--json")
    assert code == 0, err
    (pair,) = json.loads(out)["pairs"]
    assert [c["task"] for c in pair["changed_verdicts"]] == [TASKS[0]]
    items = {i["item"]: i for i in pair["items"]}
    assert items["point:pref.1.retrieval"]["changed"] == 1 and items["point:pref.2.retrieval"]["changed"] == 0
    assert items["metric:success"]["mean_delta"]["value"] == pytest.approx(0.25)


def test_a_judge_whose_id_holds_an_at_sign_is_selected_whole_or_at_a_version(
    judged: tuple[Path, str, ScriptedLlm],
) -> None:
    db, run_id, _ = judged
    team = {"judge_id": "team@rubric", "judge_version": "3", "config_hash": "t"}  # a plugin's judge named with an "@"
    events = [
        NewEvent(stream=judgment_stream(run_id), payload=j.model_copy(update=team))
        for j in judgments(db, run_id)
        if j.judge_id == "rubric-llm"
    ]

    async def add_team_judge() -> None:
        async with open_store(db) as store:
            await store.append(events)

    asyncio.run(add_team_judge())
    for named, llm in (("team@rubric", "rubric-llm"), ("team@rubric@3", "rubric-llm@2")):
        code, out, err = invoke(db, "agree", "agree-run", "--judge", named, "--judge", llm, "--json")
        assert code == 0, err
        (pair,) = json.loads(out)["pairs"]
        assert (pair["a"], pair["b"], pair["episodes"]) == (named, llm, 4)
        assert pair["changed_verdicts"] == [], "the same verdicts under another name"
    code, out, err = invoke(db, "agree", "agree-run", "--judge", "team@rubric@9", "--judge", "rubric-llm")
    assert (code, out) == (1, "")
    assert err == (
        "error: run agree-run has no current judgment by team@rubric@9; "
        "judged by: rubric-llm@2, rubric-rules@5, team@rubric@3\n"
    )


def test_self_consistency_from_samples(judged: tuple[Path, str, ScriptedLlm]) -> None:
    db, run_id, llm = judged
    calls = {"n": 0}

    def wobbly(request: dict) -> str:  # every second call gives no intent points
        calls["n"] += 1
        reply = json.loads(full_marks(request))
        if calls["n"] % 2 == 0:
            reply = {
                k: ({"score": 0, "justification": "no"} if k.startswith("intent") else v) for k, v in reply.items()
            }
        return json.dumps(reply)

    llm.handle_with(wobbly)
    before = len(llm.chat_requests)
    args = ("--base-url", llm.base_url, "--api-key", "k", "--concurrency", "1")
    code, _, err = invoke(db, "replay", "agree-run", "--judge", "rubric-llm", "--samples", "3", *args)
    assert code == 0, err
    assert len(llm.chat_requests) - before == 2 * len(TASKS)  # sample 0 was cached; samples 1 and 2 are new calls
    code, out, err = invoke(db, "agree", "agree-run", "--judge", "rubric-llm", "--json")
    assert code == 0, err
    (sc,) = json.loads(out)["self_consistency"]
    assert (sc["rater"], sc["episodes"], sc["samples"]) == ("rubric-llm", 4, 3)
    verdicts: dict[str, set[float]] = {}
    for j in judgments(db, run_id):
        if j.judge_id == "rubric-llm":
            verdicts.setdefault(j.task_id, set()).add(j.metrics["success"])
    flipped = sorted(t for t, v in verdicts.items() if len(v) > 1)
    assert flipped and "Alex_Garcia_B1" not in flipped  # no answer: intent is capped at 0 whatever the model says
    assert sorted(sc["flipped"]) == flipped
    assert sc["flip_share"] == pytest.approx(len(flipped) / 4)
    assert sc["alpha"]["metric:p_web"]["value"] is None  # full web marks in every sample: nothing varies


def test_unknown_judge_is_one_line(judged: tuple[Path, str, ScriptedLlm]) -> None:
    db, _, _ = judged
    code, _, err = invoke(db, "agree", "agree-run", "--judge", "rubric-llm", "--judge", "webarena")
    assert code == 1 and err.startswith("error: run agree-run has no current judgment by webarena; judged by:")
    code, _, err = invoke(db, "agree", "agree-run", "--human")
    assert code == 1 and "has no human labels" in err


def test_checklist_points_pool_by_dimension() -> None:
    from p2w_rt.replay.agreement import items

    j = Judgment(
        episode_stream="r/t",
        task_id="t",
        trajectory_hash="h",
        judge_id="agenticshop-checklist",
        judge_version="1",
        config_hash="c",
        points={"brand_preferences.0.0": 1.0, "brand_preferences.1.0": 0.0, "price_sensitivity.0.0": 1.0},
        max_points={"brand_preferences.0.0": 1.0, "brand_preferences.1.0": 1.0, "price_sensitivity.0.0": 1.0},
        metrics={"score": 2 / 3},
    )
    got = items(j)
    assert got["dimension:brand_preferences"] == 0.5 and got["dimension:price_sensitivity"] == 1.0
    assert got["point:brand_preferences.1.0"] == 0.0 and got["metric:score"] == pytest.approx(2 / 3)


def test_concurrent_imports_of_the_same_labels_write_them_once(
    judged: tuple[Path, str, ScriptedLlm], tmp_path: Path
) -> None:
    from p2w_rt.replay.agreement import import_labels

    db, run_id, _ = judged
    path = tmp_path / "l.csv"
    path.write_text("run,task,point,label,annotator\n" + "".join(f"agree-run,{t},success,1,eve\n" for t in TASKS))

    async def one() -> int:
        async with open_store(db) as store:
            return (await import_labels(store, path)).written

    async def both() -> list[int]:
        return list(await asyncio.gather(one(), one()))

    assert sorted(asyncio.run(both())) == [0, 4]  # the claim serializes them; the second finds them there
    assert sum(j.judge_id == "human:eve" for j in judgments(db, run_id)) == 4


def test_one_judge_without_samples_is_one_line(judged: tuple[Path, str, ScriptedLlm]) -> None:
    db, _, _ = judged
    code, _, err = invoke(db, "agree", "agree-run", "--judge", "rubric-rules")
    assert code == 1 and "rubric-rules alone on run agree-run" in err
