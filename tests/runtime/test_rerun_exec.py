"""`rerun RUN --exec CMD`: an agent of the user's own, recorded through the recording API, re-executed from its
recording (docs/design/replay.md); rerun / fork of its run without --exec name the agent that recorded it."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import LlmCall, ParsedAction
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.exec import EpisodeReplay, ReplayEndpoint
from p2w_runtime.integrations.browser_use import AGENT as BROWSER_USE
from p2w_runtime.recording import open_run
from p2w_runtime.rerun import load_episode
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.paths import REPO
from tests.helpers.recording_tasks import TASKS
from tests.helpers.replayable_example import EXAMPLE, SCRIPT, TASK, record_example
from tests.helpers.stalling_llm import StallingLlm, Trickle

pytestmark = pytest.mark.slow  # Chromium, and the embedder once while recording


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example agent's run 'mine', recorded once against the scripted model."""
    db = tmp_path_factory.mktemp("exec") / "p2w.db"
    record_example(db)
    yield db


def rerun(db: Path, example: Path, *more: str) -> tuple[int, str]:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(example))} --db {shlex.quote(str(db))}"
    done = CliRunner().invoke(main, ["--db", str(db), "rerun", "mine", "--exec", command, *more])
    return done.exit_code, done.stdout


def event_count(db: Path) -> int:
    async def count() -> int:
        async with open_store(db) as store:
            return len([e async for e in store.read_all()])

    return asyncio.run(count())


def test_the_recorded_agent_re_executes_identically_and_writes_nothing(recorded: Path) -> None:
    before = event_count(recorded)
    code, output = rerun(recorded, EXAMPLE)
    assert code == 0, output
    assert "by replayable-example" in output and "1 episode, 1 identical, 0 differ" in output
    assert f"  {TASK}: identical" in output
    assert event_count(recorded) == before


def test_one_word_of_the_prompt_changed_is_named_at_its_step(recorded: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed_agent.py"
    source = EXAMPLE.read_text()
    assert source.count("She said:") == 1
    changed.write_text(source.replace("She said:", "She wrote:"))  # in the prompt from step 2 on
    code, output = rerun(recorded, changed, "--json")
    assert code == 1, output
    report = json.loads(output)
    (episode,) = report["episodes"]
    assert report["identical"] is False and episode["identical"] is False
    mismatch = episode["mismatch"]
    assert mismatch["step"] == 2 and mismatch["kind"] == "prompt changed"
    assert "planner call at step 2" in mismatch["recorded"]
    assert "messages[0].content" in mismatch["reexecuted"] and "She wrote:" in mismatch["reexecuted"]
    assert "-She said:" in mismatch["diff"] and "+She wrote:" in mismatch["diff"]
    code, text = rerun(recorded, changed)
    assert code == 1 and f"  {TASK}: step 2: prompt changed" in text


def test_an_action_parsed_otherwise_is_named_at_its_step_with_the_agent_ending_normally(
    recorded: Path, tmp_path: Path
) -> None:
    changed = tmp_path / "split_agent.py"
    source = EXAMPLE.read_text()
    assert source.count("args=[arg]") == 1
    changed.write_text(source.replace("args=[arg]", 'args=arg.split("+")'))  # only step 2's URL has a '+'
    code, output = rerun(recorded, changed, "--json")
    assert code == 1, output
    (episode,) = json.loads(output)["episodes"]
    assert episode["exit_code"] == 0  # the prompts are the same: every call is answered, the agent ends as before
    mismatch = episode["mismatch"]
    assert mismatch["step"] == 2 and mismatch["kind"] == "action differs"
    assert (
        mismatch["recorded"]
        == mismatch["reexecuted"]
        == ("goto [http://basket.p2w.test/search?q=gluten-free+organic+penne] (executed)")
    )  # the raw text is the same; the parsed arguments differ


def test_another_history_query_is_refused_to_the_agent_and_named(recorded: Path, tmp_path: Path) -> None:
    changed = tmp_path / "asks_otherwise.py"
    source = EXAMPLE.read_text()
    assert source.count("episode.retrieve(bank, arg)") == 1
    changed.write_text(source.replace("episode.retrieve(bank, arg)", 'episode.retrieve(bank, arg + " please")'))
    code, output = rerun(recorded, changed, "--json")
    assert code == 1, output
    (episode,) = json.loads(output)["episodes"]
    assert episode["exit_code"] != 0  # ReplayDiverged ended its episode block, then the agent
    assert episode["mismatch"] == {
        "step": 1,
        "kind": "history query differs",
        "recorded": "my dietary restrictions",
        "reexecuted": "my dietary restrictions please",
        "diff": None,
    }


def test_an_agent_that_hangs_is_killed_at_the_timeout_and_its_episode_differs(recorded: Path) -> None:
    done = CliRunner().invoke(main, ["--db", str(recorded), "rerun", "mine", "--exec", "sleep 60", "--timeout", "1"])
    assert done.exit_code == 1, done.output
    assert f"  {TASK}: ends earlier" in done.stdout
    assert "the agent was killed at its timeout" in done.stdout


def test_a_fork_whose_agent_hangs_says_it_was_killed_at_its_time_limit(recorded: Path) -> None:
    args = ["fork", "mine", TASK, "--at-step", "3", "--exec", "sleep 60", "--timeout", "1", "--label", "hung"]
    done = CliRunner().invoke(main, ["--db", str(recorded), *args, "--base-url", "http://127.0.0.1:9/v1"])
    assert done.exit_code == 1, done.output
    assert "error: the agent wrote no run 'hung'; it was killed at its time limit (--timeout)\n" in done.output


def test_rerun_and_fork_without_exec_name_the_agent_that_recorded_the_run(recorded: Path) -> None:
    cli = CliRunner()
    for args in (["rerun", "mine"], ["fork", "mine", TASK, "--at-step", "2"]):
        done = cli.invoke(main, ["--db", str(recorded), *args])
        assert done.exit_code != 0
        lines = done.output.strip().splitlines()
        assert len(lines) == 1, done.output
        assert "recorded by agent 'replayable-example'" in lines[0] and "--exec CMD" in lines[0]
        assert "Traceback" not in done.output
    mixed = cli.invoke(main, ["--db", str(recorded), "rerun", "mine", "--exec", "true", "--record-as", "again"])
    assert mixed.exit_code == 2 and "--exec serves the recording as it is" in mixed.output


async def test_the_endpoint_answers_the_recorded_call_in_every_wire_format(recorded: Path) -> None:
    async with open_store(recorded) as store:
        run = await find_run(store, "mine")
        (ref,) = await episodes_of(store, run.run_id)
        source = await load_episode(store, ref.stream)
        payloads = [stored.decode_payload() async for stored in store.read_stream(ref.stream)]
        first = next(p for p in payloads if isinstance(p, LlmCall))  # the first planner call: memory
        async with ReplayEndpoint() as endpoint:
            client = openai.AsyncOpenAI(base_url=f"{endpoint.url}/v1", api_key="unused", max_retries=0)
            asked = {"model": first.model, "messages": first.messages}
            endpoint.episode = EpisodeReplay(source)
            chat = await client.chat.completions.create(**asked)  # type: ignore[call-overload]
            assert chat.choices[0].message.content == first.response
            endpoint.episode = EpisodeReplay(source)
            parts = [
                c.choices[0].delta.content or ""
                async for c in await client.chat.completions.create(**asked, stream=True)
                if c.choices
            ]  # type: ignore[call-overload]
            assert "".join(parts) == first.response
            endpoint.episode = EpisodeReplay(source)
            response = await client.responses.create(model=first.model, input=first.messages)  # type: ignore[arg-type]
            assert response.output_text == first.response
            with pytest.raises(openai.BadRequestError, match=r"not in the recording .*messages\[0\]\.content"):
                await client.chat.completions.create(model=first.model, messages=[{"role": "user", "content": "hi"}])
            mismatch = endpoint.episode.mismatch()  # nothing handed back: compared by the calls made
            assert mismatch is not None and mismatch.kind == "prompt changed"
            assert mismatch.step == source.answered[1].step and "messages[0].content" in (mismatch.reexecuted or "")


def test_a_fork_of_a_browser_use_run_is_refused_in_one_line_pointing_at_rerun(tmp_path: Path) -> None:
    """Its rerun re-executes Browser-Use (tests/runtime/test_browser_use_rerun.py); a fork of it is not built, nor a
    rerun that would write a new run or search the memory bank again."""
    db = tmp_path / "bu.db"

    async def recorded_by_browser_use() -> None:
        async with open_store(db) as store, await open_run(
            store, label="bu", agent=BROWSER_USE, model="m", tasks=TASKS[:1]
        ) as run, run.episode(TASKS[0]) as episode:  # fmt: skip
            await episode.observe(url="http://shop.example/")
            await episode.action("done [penne]", ParsedAction(name="done", args=["penne"]))
            await episode.end("answered", "penne")

    asyncio.run(recorded_by_browser_use())
    done = CliRunner().invoke(main, ["--db", str(db), "fork", "bu", "T1", "--at-step", "1"])
    assert done.exit_code != 0 and len(done.output.strip().splitlines()) == 1, done.output
    assert "recorded by agent 'browser-use'" in done.output and "p2w-rt rerun bu re-executes" in done.output
    # its rerun (the browser-use integration's) refuses what it does not re-execute, before Browser-Use starts
    refused = CliRunner().invoke(main, ["--db", str(db), "rerun", "bu", "--record-as", "again"])
    assert refused.exit_code == 2 and refused.output.splitlines() == [
        "error: a Browser-Use run is re-executed against its recording as it is: no --record-as, "
        "--recorded-retrieval, --history"
    ]


def test_fork_exec_continues_the_agent_live_after_its_recorded_prefix(recorded: Path) -> None:
    """Fork at step 3: the calls recorded before step 3 (the memory question, its answer, recorded at step 2 as the
    call after step 1's action, and the search) come from the recording, steps 3-4 from the live (scripted) model;
    the agent writes the new run."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE))} --db {shlex.quote(str(recorded))}"
    with ScriptedLlm() as live:
        live.script(
            Text("Thought: the live model.\nAction: open [1]"),
            Text("Thought: done.\nAction: stop [organic penne]"),
        )
        args = ["fork", "mine", TASK, "--at-step", "3", "--exec", command, "--base-url", live.base_url]
        args += ["--model", "live-model", "--api-key", "sk-live-key-never-stored-0000"]
        done = CliRunner().invoke(main, ["--db", str(recorded), *args])
        assert done.exit_code == 0, done.output
        assert len(live.chat_requests) == 2  # steps 3 and 4; the three calls before: from the recording
        asked = live.chat_requests[0]["messages"][0]["content"]
        assert "Page http://basket.p2w.test/search?q=gluten-free" in asked
    assert f"into mine-{TASK}-at-3 (" in done.output and "1 episode, completed; the agent exited 0" in done.output

    async def forked() -> tuple[str, str, list[LlmCall], Any]:
        async with open_store(recorded) as store:
            run = await find_run(store, f"mine-{TASK}-at-3")
            source = (await episodes_of(store, (await find_run(store, "mine")).run_id))[0].stream
            (ref,) = await episodes_of(store, run.run_id)
            payloads = [e.decode_payload() async for e in store.read_stream(ref.stream)]
            calls = [p for p in payloads if isinstance(p, LlmCall)]
            return run.started.backbone_model, source, calls, payloads[0].fork

    model, source, calls, fork = asyncio.run(forked())
    assert model == "live-model" and fork.source_stream == source and fork.at_step == 3
    assert [c.response for c in calls[:3]] == [t.content for t in SCRIPT[:3]]  # the recording's
    assert [c.step for c in calls[3:]] == [3, 4] and "the live model" in (calls[3].response or "")  # live
    assert "sk-live-key" not in json.dumps([c.model_dump(mode="json") for c in calls])


def test_the_example_agent_without_a_browser_says_so_in_one_line(tmp_path: Path) -> None:
    """``rerun --exec`` without ``--restore har`` gives no ``P2W_CDP_URL`` (docs/design/exec.md): the example agent
    ends saying what it lacks, not with a traceback."""
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"task_id": "t", "intent": "buy penne", "start_url": "http://127.0.0.1:9/"}))
    env = {k: v for k, v in os.environ.items() if k != "P2W_CDP_URL"} | {
        "P2W_TASK_FILE": str(task), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k",
    }  # fmt: skip
    done = subprocess.run(
        [sys.executable, "examples/exec_agent.py"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.strip() == (
        "exec_agent.py: no browser to drive: P2W_CDP_URL is not set (rerun --exec needs --restore har)"
    )


def test_a_forked_agents_live_model_that_trickles_fails_at_the_timeout(recorded: Path) -> None:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE))} --db {shlex.quote(str(recorded))}"
    with StallingLlm(lambda n, request: Trickle(every_s=0.2)) as server:
        args = ["fork", "mine", TASK, "--at-step", "3", "--exec", command, "--base-url", server.base_url]
        args += ["--llm-timeout", "1", "--max-retries", "0", "--label", "late", "--timeout", "300"]
        done = CliRunner().invoke(main, ["--db", str(recorded), *args])
    assert done.exit_code == 1, done.output
    assert "error: the agent failed: it exited 1: " in done.output, done.output
    assert "Error code: 504 - the live model failed: timeout after 1s" in done.output, done.output
