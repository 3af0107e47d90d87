"""`record --exec CMD` killed -9 (only the p2w-rt process, not its group): the agent it started and the Chromium it
launched for the agent die with it instead of running on, unwatched (``setpriv --pdeathsig``); the model calls the
agent made before are stored, and the run resumes and verifies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2w_runtime.testing import Delay, ScriptedLlm, Text
from tests.helpers.exec_support import TASK, p2w_rt, running
from tests.helpers.paths import REPO
from tests.helpers.suite_tmp import process_tmpdir

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))

pytestmark = pytest.mark.slow


def _chromiums_of(profile_root: Path) -> list[int]:
    """The Chromium processes whose profile lies under ``profile_root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(arg.startswith(f"--user-data-dir={profile_root}".encode()) for arg in cmdline) and running(
            int(entry.name)
        ):
            found.append(int(entry.name))
    return found


def test_the_agent_and_its_chromium_die_with_a_killed_recorder(tmp_path: Path) -> None:
    with process_tmpdir() as tmp:
        _kill_the_recorder(tmp_path, tmp)


def _kill_the_recorder(tmp_path: Path, tmp: Path) -> None:
    pid_file, script = tmp_path / "agent.pid", tmp_path / "sleeper.py"
    script.write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(300)\n")
    agent = f"{sys.executable} {script}"
    recorder = subprocess.Popen(
        [
            P2W_RT,
            "--db",
            str(tmp_path / "p2w.db"),
            "record",
            "--exec",
            agent,
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--task",
            "Lena_Fischer_A1",
            "--label",
            "killed",
        ],  # fmt: skip
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (pid_file.is_file() and pid_file.read_text()):
            assert recorder.poll() is None, recorder.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the agent never started"
            time.sleep(0.2)
        agent_pid = int(pid_file.read_text())
        browsers = _chromiums_of(tmp)
        assert browsers and running(agent_pid), "the agent and its Chromium run while the recorder does"

        recorder.send_signal(signal.SIGKILL)  # the recorder alone, as the OOM killer would
        recorder.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (running(agent_pid) or _chromiums_of(tmp)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not running(agent_pid), "the agent outlived the recorder"
        assert _chromiums_of(tmp) == [], "Chromium outlived the recorder"
    finally:
        if recorder.poll() is None:
            os.killpg(recorder.pid, signal.SIGKILL)
            recorder.wait()


def test_the_calls_an_agent_made_on_one_page_survive_a_recorder_killed_during_the_next(tmp_path: Path) -> None:
    """An outside agent's step ends only at its next navigation: its calls on one page were held until then, and a
    recorder killed -9 lost every one, answered and paid for. Each is stored once it ended."""
    db, script = tmp_path / "p2w.db", tmp_path / "thinker.py"
    script.write_text(
        "import json, os, openai\n"
        "client, model = openai.OpenAI(max_retries=0), os.environ['P2W_MODEL']\n"
        "def ask(text):\n"
        "    said = client.chat.completions.create(model=model, messages=[{'role': 'user', 'content': text}])\n"
        "    return said.choices[0].message.content\n"
        "print(json.dumps({'answer': ask('check ' + ask('plan'))}))\n"
    )
    agent = f"{sys.executable} {script}"
    with ScriptedLlm() as llm, process_tmpdir() as tmp:
        llm.script(Text("the plan"), Delay(300, Text("never")), Text("the plan"), Text("checked"))
        recorder = subprocess.Popen(
            [P2W_RT, "--db", str(db), "--log-file", str(db.with_suffix(".jsonl")), "record", "--exec", agent,
             "--base-url", llm.base_url, "--model", "scripted-model", "--task", TASK, "--label", "thinker"],
            cwd=REPO, env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while len(llm.requests) < 2:  # the second call waits upstream
                assert recorder.poll() is None, recorder.communicate()[1][-2000:]
                assert time.monotonic() < deadline, "the agent never asked its second question"
                time.sleep(0.2)
            time.sleep(1)
            recorder.send_signal(signal.SIGKILL)
            recorder.wait(timeout=30)
        finally:
            if recorder.poll() is None:
                os.killpg(recorder.pid, signal.SIGKILL)
                recorder.wait()
        shown = p2w_rt(db, "show", "thinker", f"{TASK}#1", "--json")
        calls = [json.loads(line)["payload"] for line in shown.stdout.splitlines() if '"llm.call"' in line]
        assert [(c["response"], c["error"]) for c in calls] == [("the plan", None)], shown.stderr
        resumed = p2w_rt(db, "record", "--resume", "thinker", "--exec", agent, "--base-url", llm.base_url)
        assert resumed.returncode == 0 and "1 answered" in resumed.stdout, resumed.stderr[-2000:]
    verified = p2w_rt(db, "verify", "thinker")
    assert verified.returncode == 0 and "0 events not covered by a seal" in verified.stdout, verified.stdout
