"""An installed package's agent brings a working ``rerun`` with no edit of p2w-rt (issue 38).

The distribution ``outside-bench`` (``tests/helpers/plugin_install.py``) registers an agent, ``ask-once``, written
only against p2w-rt's public names: it asks the model once which product fits the task and answers with its reply,
recording through the recording API; its ``rerun`` runs that same recording code again through
``p2w_runtime.exec.rerun_in_process``. Through the real ``p2w-rt``: a run recorded against the scripted model is
re-executed with no model running (identical, exit 0), then with the agent changed by an environment variable it
reads (a reworded prompt; another answer to the same reply): ``rerun`` names the episode, the step and what
differs, exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2w_runtime.testing import ScriptedLlm
from tests.helpers.plugin_install import install, p2w

PLUGIN = '''
"""outside_bench: the "ask-once" agent, recorded and re-executed, registered when loaded."""

import os

import openai

from p2w_rt.schemas import ParsedAction
from p2w_runtime.agent import EpisodeOutcome, RecordSummary
from p2w_runtime.errors import UserError
from p2w_runtime.integrations import AgentIntegration, RerunRefused, register_agent
from p2w_runtime.recording import instrument, load_tasks, open_run

AGENT = "ask-once"


async def ask_once(run, task, client, model):
    """One episode: the model asked which product fits, its reply the answer. ``OUTSIDE_PROMPT`` rewords the
    question, ``OUTSIDE_SHOUT`` upper-cases the answer: the agent's code changed between record and rerun."""
    llm = instrument(client)
    async with run.episode(task) as episode:
        await episode.observe(url=task.start_url, title="not visited")
        question = os.environ.get("OUTSIDE_PROMPT", "Which product fits?")
        reply = await llm.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"{question} {task.intent}"}]
        )
        said = reply.choices[0].message.content.strip()
        if os.environ.get("OUTSIDE_SHOUT"):
            said = said.upper()
        await episode.action(f"stop [{said}]", ParsedAction(name="stop", args=[said]))
        end = await episode.end("answered", said)
    return EpisodeOutcome(episode.stream, task.task_id, end.end_reason, end.answer, end.steps)


async def record_ask_once(store, request, progress, *, hosting):
    if request.worker or request.resume:
        raise UserError("--agent ask-once records a new run, not --worker or --resume")
    client = openai.AsyncOpenAI(base_url=request.base_url, api_key=request.api_key, max_retries=0)
    async with await open_run(
        store, label=request.label or f"ask-once-{request.model}", agent=AGENT, model=request.model,
        tasks=load_tasks(request.tasks_dir), only=request.task_ids or None, history=request.history_dir,
    ) as run:
        outcomes = [await ask_once(run, task, client, request.model) for task in run.todo()]
    return RecordSummary(run.run_id, run.label, 0, outcomes)


async def rerun_ask_once(store, run_ref, options, progress, *, hosting):
    """The recorded episodes re-executed by ``ask_once`` itself, its model answered from the recording."""
    if options.record_as or options.recorded_retrieval or options.history_dir:
        raise RerunRefused("--agent ask-once re-executes a run as recorded: no --record-as, --recorded-retrieval, "
                           "--history")
    from p2w_runtime.exec import rerun_in_process  # Playwright and the replay endpoint: only when re-executing

    async def again(this):
        model = this.run.started.backbone_model
        async with await open_run(store, label=this.run.label, agent=AGENT, model=model, tasks=[this.task]) as run:
            await ask_once(run, this.task, this.client, model)

    return await rerun_in_process(store, run_ref, again, options.task_ids, progress=progress)


PLUGIN = register_agent(
    AgentIntegration("ask-once", "another package's agent: asks the model once.", record_ask_once, rerun_ask_once)
)
'''

TASK = "Lena_Fischer_A1"
ANSWER = "Trail shoes, size 42"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``outside-bench`` installed, and one episode of its agent recorded as run ``asked`` against the scripted
    model, which is stopped before any rerun: what answers a rerun is the recording."""
    folder = tmp_path_factory.mktemp("plugin-rerun")
    site, db = folder / "site", folder / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    with ScriptedLlm() as model:
        model.handle_with(lambda request: ANSWER)
        args = ("--model", "scripted-model", "--base-url", model.base_url, "--api-key", "sk-not-a-real-key-0000")
        done = p2w(site, db, "record", "--agent", "ask-once", *args, "--task", TASK, "--label", "asked")
        assert len(model.chat_requests) == 1
    assert done.returncode == 0 and "1 episode; 1 answered" in done.stdout, done.stderr
    return site, db


def _verified(site: Path, db: Path) -> str:
    """``verify``'s count of the run's streams, events, blobs and seals."""
    return p2w(site, db, "verify", "asked").stdout


def test_the_installed_agents_rerun_re_executes_its_run_identically(recorded: tuple[Path, Path]) -> None:
    site, db = recorded
    before = _verified(site, db)
    again = p2w(site, db, "rerun", "asked")
    assert again.returncode == 0, again.stdout + again.stderr
    headline, episode = again.stdout.splitlines()
    assert headline.startswith("rerun of asked (") and ") by ask-once in process: 1 episode, 1 identical, 0 differ" in (
        headline
    )
    assert episode == f"  {TASK}: identical"
    as_json = json.loads(p2w(site, db, "rerun", "asked", TASK, "--json").stdout)
    assert (as_json["agent"], as_json["command"], as_json["identical"]) == ("ask-once", None, True)
    assert [(e["task_id"], e["exit_code"], e["mismatch"]) for e in as_json["episodes"]] == [(TASK, 0, None)]
    assert _verified(site, db) == before, "a rerun writes nothing"


def test_a_reworded_prompt_is_refused_by_the_recording_and_named(
    recorded: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, db = recorded
    monkeypatch.setenv("OUTSIDE_PROMPT", "What should I buy?")
    differs = p2w(site, db, "rerun", "asked")
    assert differs.returncode == 1, differs.stdout + differs.stderr
    headline, *lines = differs.stdout.splitlines()
    assert ": 1 episode, 0 identical, 1 differ" in headline
    assert lines[0] == f"  {TASK}: step 1: prompt changed"
    assert lines[1].startswith("      recorded:    planner call at step 1 (")
    assert lines[2].startswith("      re-executed: request ") and lines[2].endswith(
        ": messages[0].content: recorded 'Which product fits? Find penne t', now 'What should I buy? Find penne th'"
    )
    diff = [line.split(" Find penne")[0] for line in lines if line.startswith(("      -", "      +"))]
    assert diff == [
        "      --- recorded",
        "      +++ re-executed",
        "      -Which product fits?",
        "      +What should I buy?",
    ]
    assert lines[-1].startswith("      the agent exited 1: BadRequestError: Error code: 400 - not in the recording")


def test_another_answer_to_the_same_reply_is_the_action_that_differs(
    recorded: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, db = recorded
    monkeypatch.setenv("OUTSIDE_SHOUT", "1")
    differs = p2w(site, db, "rerun", "asked", "--json")
    assert differs.returncode == 1, differs.stdout + differs.stderr
    report = json.loads(differs.stdout)
    assert report["identical"] is False
    (episode,) = report["episodes"]
    assert (episode["task_id"], episode["exit_code"]) == (TASK, 0), "the agent ran to its end: its decision differs"
    mismatch = episode["mismatch"]
    assert (mismatch["step"], mismatch["kind"]) == (1, "action differs")
    assert (mismatch["recorded"], mismatch["reexecuted"]) == (
        f"stop [{ANSWER}] (executed)",
        f"stop [{ANSWER.upper()}] (executed)",
    )


def test_the_installed_agents_rerun_refuses_what_it_does_not_re_execute(recorded: tuple[Path, Path]) -> None:
    site, db = recorded
    refused = p2w(site, db, "rerun", "asked", "--record-as", "again")
    assert refused.returncode == 2 and refused.stdout == "", refused.stdout
    assert refused.stderr.splitlines() == [
        "error: --agent ask-once re-executes a run as recorded: no --record-as, --recorded-retrieval, --history"
    ]
