"""`rerun RUN` of a `record --agent browser-use` run: Browser-Use re-executed in process, its model calls served
from the recording with the date, tab ids and page blanked on both sides (docs/design/replay.md)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_cli.demo_model import DemoModelScript
from p2w_rt.cli import main
from p2w_runtime.domain.trajectory import ActionCommand, ActionRecord
from p2w_runtime.exec import BrowserUseVolatile, browser_use_volatile
from p2w_runtime.integrations.browser_use import AGENT_SETTINGS
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.suite_tmp import left_behind, process_tmpdir

pytestmark = pytest.mark.slow  # Chromium, Browser-Use

TASK = "Lena_Fischer_A1"
P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """One level-1 sample task recorded by Browser-Use against the scripted model (three history questions,
    search, open, add to cart, done), by a ``p2w-rt`` process with a TMPDIR of its own: what it left there second."""
    db = tmp_path_factory.mktemp("bu-rerun") / "p2w.db"
    with ScriptedLlm() as model, process_tmpdir() as tmp:
        model.handle_with(DemoModelScript())
        args = ["record", "--agent", "browser-use", "--tasks", "sample", "--task", TASK, "--label", "bu"]
        args += ["--model", "scripted-model", "--base-url", model.base_url, "--api-key", "sk-not-a-real-key-0000"]
        done = p2w_rt(db, tmp, *args)
        left = left_behind(tmp)
    assert done.returncode == 0 and "1 answered" in done.stdout, done.stderr[-3000:]
    return db, left


def p2w_rt(db: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``p2w-rt --db DB ARGS`` with ``tmp`` as its TMPDIR."""
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([P2W_RT, "--db", str(db), *args], capture_output=True, text=True, env=env, timeout=600)


def _events(db: Path) -> int:
    async def count() -> int:
        async with open_store(db) as store:
            return sum([1 async for _ in store.read_all()])

    return asyncio.run(count())


def test_the_recording_left_nothing_in_its_temp_dir(recorded: tuple[Path, list[str]]) -> None:
    """Browser-Use's downloads and agent folders, Chromium's profile and socket folder: all removed
    (docs/design/temp-files.md)."""
    assert recorded[1] == []


def test_browser_use_re_executes_identically_from_its_recording(recorded: tuple[Path, list[str]]) -> None:
    db, _ = recorded
    before = _events(db)
    with process_tmpdir() as tmp:
        done = p2w_rt(db, tmp, "rerun", "bu", "--json")
        assert left_behind(tmp) == []
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["agent"] == "browser-use" and report["command"] is None and report["identical"] is True
    assert [(e["task_id"], e["identical"]) for e in report["episodes"]] == [(TASK, True)]
    assert _events(db) == before  # nothing written: the re-execution recorded into memory


def test_a_changed_system_prompt_is_named_at_step_1(
    recorded: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(AGENT_SETTINGS, "max_actions_per_step", 4)  # "a maximum of 5 actions" in its system prompt
    done = CliRunner().invoke(main, ["--db", str(recorded[0]), "rerun", "bu"])
    assert done.exit_code == 1, done.output
    lines = done.output.splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if "by browser-use in process" in line) :]  # after logs
    assert "1 episode, 0 identical, 1 differ" in lines[0] and "by browser-use in process" in lines[0]
    assert lines[1] == f"  {TASK}: step 1: prompt changed"
    assert "messages[0].content" in lines[3] and "maximum of 5 act" in lines[3] and "maximum of 4 act" in lines[3]


def test_the_date_tab_ids_and_page_are_what_is_blanked() -> None:
    """Two recordings of one task with the same answers differ only there (docs/design/replay.md)."""
    one = "<browser_state>\nCurrent tab: B24A\nTab B24A: http://a/\n[55]<input />\n</browser_state>\n"
    two = "<browser_state>\nCurrent tab: 05B9\nTab 05B9: http://a/\n[54]<input />\n</browser_state>\n"
    at = "<step_info>Step1 maximum:25\nToday:{}</step_info>\nSwitched to Tab {}"
    first = [{"role": "user", "content": one + at.format("2026-12-03", "B24A")}]
    second = [{"role": "user", "content": [{"type": "text", "text": two + at.format("2027-01-01", "05B9")}]}]
    assert browser_use_volatile(first)[0]["content"] == browser_use_volatile(second)[0]["content"][0]["text"]
    changed = [{"role": "user", "content": one + at.format("2026-12-03", "B24A") + "!"}]
    assert browser_use_volatile(changed) != browser_use_volatile(first)


def test_a_recorded_element_index_is_served_as_the_same_element_on_today_s_page() -> None:
    """Browser-Use's indices are backend node ids: a recorded click is served on the element with the same tag,
    attributes and text today, and the action it took is compared under the recorded index."""
    page = "<browser_state>\n[{}]<label />\n\tQty\n\t|SHADOW(open)|[{}]<input name=qty />\n[{}]<button />\n\tAdd\n"
    recorded = [{"role": "user", "content": page.format(407, 364, 410) + "</browser_state>"}]
    today = [{"role": "user", "content": page.format(408, 365, 411) + "</browser_state>"}]
    volatile = BrowserUseVolatile()
    served = volatile.answer(recorded, today, json.dumps({"action": [{"click": {"index": 410}}]}))
    assert json.loads(served) == {"action": [{"click": {"index": 411}}]}
    took = ActionRecord("e1", 6, '{"click": {"index": 411}}', ActionCommand("click", ("411",)), "executed")
    back = volatile.as_recorded(took)
    assert isinstance(back, ActionRecord) and back.raw == '{"click": {"index": 410}}'
    assert back.parsed == ActionCommand("click", ("410",))
