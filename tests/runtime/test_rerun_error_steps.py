"""`p2w-rt rerun` of an episode that ended in an error: it records the steps completed before the failing one, and
a recording of the agent that wrote 0 steps for every error still reruns identical (docs/design/rerun.md, "Steps of
an episode that ends in an error").
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import EpisodeFinished, EpisodeStarted
from p2w_runtime.domain import EpisodeWriter, attempt_id, episodes_of, find_run
from p2w_runtime.store import open_store
from p2w_runtime.testing import HttpError, ScriptedLlm, Text

LABEL, TASK = "failing", "Priya_Raman_A1"


def invoke(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def record_failing_at_step_3(db: Path) -> None:
    with ScriptedLlm() as llm:
        llm.script(
            Text("Thought: open the shop\nAction: ```goto [http://basket.p2w.test/]```"),
            Text("Thought: search\nAction: ```goto [http://basket.p2w.test/search?q=penne]```"),
            HttpError(500, "upstream exploded"),  # step 3's planner, both attempts
            HttpError(500, "upstream exploded"),
        )
        args = ["record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
        code, out = invoke(db, *args, "--scheme", "no-history", "--max-retries", "1", "--label", LABEL, "--task", TASK)
    assert code == 1, out


def add_attempt_ending_after(db: Path, steps: int, attempt: int) -> None:
    """The counted episode written again as the task's next attempt (the one that counts), its end counting
    ``steps``: with 0, the episode as the agent wrote every error before it counted the steps completed."""

    async def add() -> None:
        async with open_store(db) as store:
            run = await find_run(store, LABEL)
            (ref,) = await episodes_of(store, run.run_id)
            episode_id = attempt_id(TASK, attempt)
            writer = EpisodeWriter.of(run.run_id, episode_id, store)
            async for stored in store.read_stream(ref.stream):
                payload = stored.decode_payload()
                if isinstance(payload, EpisodeStarted):
                    payload = payload.model_copy(update={"episode_id": episode_id})
                if isinstance(payload, EpisodeFinished):
                    payload = payload.model_copy(update={"steps": steps})
                writer.add(payload, stored.causation_id)
            await writer.flush()
            await writer.settle()

    asyncio.run(add())


def rerun(db: Path) -> tuple[int, dict]:
    code, out = invoke(db, "rerun", LABEL, "--json")
    return code, json.loads(out)


def test_an_error_reruns_identical_with_its_steps_and_as_the_agent_once_recorded_it(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    record_failing_at_step_3(db)
    code, report = rerun(db)
    assert (code, report["identical"]) == (0, True), report
    assert "error after 2 steps" in invoke(db, "show", LABEL, TASK)[1]

    add_attempt_ending_after(db, 0, attempt=2)  # what the agent wrote before
    code, report = rerun(db)
    (episode,) = report["episodes"]
    assert episode["stream"].endswith(f"/{TASK}#2"), "the rerun re-executed the attempt written as before"
    assert (code, report["identical"]) == (0, True), report

    add_attempt_ending_after(db, 1, attempt=3)  # a count that is not the agent's, then or now
    code, report = rerun(db)
    mismatch = report["episodes"][0]["mismatch"]
    assert code == 1 and (mismatch["kind"], mismatch["recorded"], mismatch["reexecuted"]) == (
        "ends later",
        "error after 1 step",
        "error after 2 steps",
    ), report
