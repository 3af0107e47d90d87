"""`rerun RUN --exec CMD --restore har`: an outside agent that browses (the Python example, over CDP) re-executed
with its pages served from the HAR `record --exec CMD --har` kept: the demo sites are not hosted during the rerun,
so an identical rerun proves the pages came from the recording; a changed prompt is named at its step; a run
without bodies in its HAR is refused in one line."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2w_runtime.rerun import har_has_bodies
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.exec_support import ANSWER, PENNE, PYTHON_AGENT, SEARCH, TASK, p2w_rt, record_exec
from tests.helpers.paths import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def har_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The Python example on one task with ``--har`` (label ``har``), and a one-step run without it (``plain``)."""
    db = tmp_path_factory.mktemp("exec-har") / "p2w.db"
    with ScriptedLlm() as llm:
        llm.script(
            Text(f"Thought: Basket sells groceries.\nAction: goto [{SEARCH}]"),
            Text(f"Action: click [{PENNE}]"),
            Text("Action: fill [Quantity=2]"),
            Text("Action: click [Add to cart]"),
            Text(f"Action: stop [{ANSWER}]"),
            Text("Action: stop [nothing to do]"),
        )
        done = record_exec(db, PYTHON_AGENT, llm.base_url, "har", "--task", TASK, "--har")
        assert done.returncode == 0, done.stderr[-3000:]
        done = record_exec(db, PYTHON_AGENT, llm.base_url, "plain", "--task", TASK)
        assert done.returncode == 0, done.stderr[-3000:]
    yield db


def _har_of(db: Path, label: str) -> bytes | None:
    async def read() -> bytes | None:
        async with open_store(db, create=False, read_only=True) as store:
            runs = [e async for e in store.read_all(types=["run.started"]) if e.payload["label"] == label]
            (final,) = [e async for e in store.read_all(stream_prefix=runs[0].stream, types=["final_state"])]
            return await store.get_blob(final.payload["har"]) if final.payload["har"] else None

    return asyncio.run(read())


def test_the_har_keeps_the_pages_bodies_and_names_no_path_of_this_machine(har_run: Path) -> None:
    har = _har_of(har_run, "har")
    assert har is not None and har_has_bodies(har)
    urls = [entry["request"]["url"] for entry in json.loads(har)["log"]["entries"]]
    assert SEARCH in urls and any(url.startswith("http://basket.p2w.test/product/") for url in urls), urls
    assert str(har_run.parent).encode() not in har and b"/tmp/" not in har
    assert _har_of(har_run, "plain") is None  # without --har p2w-rt keeps no HAR of an outside agent


def test_the_agent_reruns_identical_on_the_recorded_pages(har_run: Path) -> None:
    done = p2w_rt(har_run, "rerun", "har", "--exec", PYTHON_AGENT, "--restore", "har", "--json")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert [(e["task_id"], e["identical"], e["exit_code"]) for e in report["episodes"]] == [(TASK, True, 0)]


def test_a_changed_prompt_is_named_at_its_step_on_the_recorded_pages(har_run: Path, tmp_path: Path) -> None:
    changed = tmp_path / "exec_agent.py"
    source = (REPO / "examples" / "exec_agent.py").read_text()
    changed.write_text(source.replace("You browse the web for a user.", "You browse the web for someone."))
    command = PYTHON_AGENT.replace("examples/exec_agent.py", str(changed))
    done = p2w_rt(har_run, "rerun", "har", "--exec", command, "--restore", "har")
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert f"{TASK}: step 1: prompt changed" in done.stdout, done.stdout


def test_a_run_without_bodies_in_its_har_is_refused_in_one_line(har_run: Path) -> None:
    done = p2w_rt(har_run, "rerun", "plain", "--exec", PYTHON_AGENT, "--restore", "har")
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert "has no HAR with response bodies to serve (record it with `record --exec CMD --har`)" in line, line
    refused = p2w_rt(har_run, "rerun", "har", "--restore", "har")
    assert refused.returncode == 2 and "--restore har serves pages to an agent run with --exec CMD" in refused.stderr
