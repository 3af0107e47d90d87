"""`record --exec`: an agent past `--timeout` is killed and its episode ended, the others go on; a recorder killed
-9 takes the agent's own children with it (a wrapper script's background job), not only the agent; a second
`--resume` of a run another process is resuming is refused in one line and writes nothing. Agents here ask no
model: shell scripts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from p2w_runtime.domain import find_run, resuming
from p2w_runtime.store import open_store
from tests.helpers.exec_support import P2W_RT, TASK, p2w_rt, running
from tests.helpers.paths import REPO
from tests.helpers.suite_tmp import process_tmpdir

ENDPOINT = ("--base-url", "http://127.0.0.1:9/v1")  # never called: these agents ask no model
OTHER = "Lena_Fischer_A1"


def _finished(db: Path, label: str, task: str) -> list[tuple[str, str | None]]:
    events = [json.loads(line) for line in p2w_rt(db, "show", label, task, "--json").stdout.splitlines()]
    return [(e["payload"]["end_reason"], e["payload"]["detail"]) for e in events if e["type"] == "episode.finished"]


def test_an_agent_past_the_timeout_is_killed_and_its_episode_ended(tmp_path: Path) -> None:
    db, agent = tmp_path / "p2w.db", tmp_path / "slow.sh"
    agent.write_text(
        f'if [ "$P2W_TASK_ID" = {TASK} ]; then echo stuck >&2; sleep 120; fi\necho \'{{"answer": "ok"}}\'\n'
    )
    began = time.monotonic()
    done = p2w_rt(
        db, "record", "--exec", f"sh {agent}", *ENDPOINT, "--model", "m", "--task", TASK, "--task", OTHER,
        "--concurrency", "2", "--label", "slow", "--timeout", "3",
    )  # fmt: skip
    assert done.returncode == 0 and "1 answered" in done.stdout and "1 error" in done.stdout, done.stderr
    assert time.monotonic() - began < 90
    assert _finished(db, "slow", TASK) == [("error", "the agent was killed at its timeout (3 s): stuck")]
    assert _finished(db, "slow", OTHER) == [("answered", None)]
    assert "never retrieved" not in done.stderr  # the killed agent's readers are cancelled, and that is expected


def test_the_paths_p2w_rt_gave_the_agent_are_stored_as_the_agent_knows_them(tmp_path: Path) -> None:
    """A record names no path of the machine that wrote it: an agent's standard error quoting its task file, answer
    file, temp folder, working folder or home is stored with the names it knows them by."""
    db, agent = tmp_path / "p2w.db", tmp_path / "tell.sh"
    agent.write_text(
        'echo "task $P2W_TASK_FILE answer $P2W_ANSWER_FILE tmp $TMPDIR/x.log here $PWD/a.py home $HOME/.cache '
        'not $HOME-other" >&2; exit 3\n'
    )
    done = p2w_rt(db, "record", "--exec", f"sh {agent}", *ENDPOINT, "--model", "m", "--task", TASK, "--label", "paths")
    assert done.returncode == 1 and "1 error" in done.stdout, done.stderr  # every episode failed
    home = str(Path.home())
    assert _finished(db, "paths", TASK) == [
        (
            "error",
            "the agent exited with status 3: task $P2W_TASK_FILE answer $P2W_ANSWER_FILE tmp $TMPDIR/x.log here "
            f"./a.py home ~/.cache not {home}-other",
        )
    ]


def test_an_agent_killed_by_a_signal_is_said_to_be_so_and_its_standard_error_kept(tmp_path: Path) -> None:
    """The OOM killer's SIGKILL: the agent's death is told as such, with its own last words, not as an exit 1 of the
    group watcher failing to pass the signal on (SIGKILL takes no handler)."""
    db, agent = tmp_path / "p2w.db", tmp_path / "oom.sh"
    agent.write_text('echo "allocating 64 GiB" >&2; kill -9 $$\n')
    done = p2w_rt(db, "record", "--exec", f"sh {agent}", *ENDPOINT, "--model", "m", "--task", TASK, "--label", "oom")
    assert done.returncode == 1 and "1 error" in done.stdout, done.stderr
    assert _finished(db, "oom", TASK) == [("error", "the agent was killed by SIGKILL: allocating 64 GiB")]


@pytest.mark.slow
def test_a_killed_recorder_takes_the_agents_children_with_it(tmp_path: Path) -> None:
    with process_tmpdir() as tmp:
        pid_file, script = tmp_path / "child.pid", tmp_path / "wrapper.sh"
        script.write_text(f"sleep 300 &\necho $! > {pid_file}\nwait\n")
        recorder = subprocess.Popen(
            [P2W_RT, "--db", str(tmp_path / "p2w.db"), "record", "--exec", f"bash {script}", *ENDPOINT,
             "--model", "m", "--task", TASK, "--label", "wrapped"],
            cwd=REPO, env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not (pid_file.is_file() and pid_file.read_text().strip()):
                assert recorder.poll() is None, recorder.communicate()[1][-2000:]
                assert time.monotonic() < deadline, "the agent never started"
                time.sleep(0.2)
            child = int(pid_file.read_text())
            assert running(child), "the agent's child runs while the recorder does"
            recorder.send_signal(signal.SIGKILL)  # the recorder alone, as the OOM killer would
            recorder.wait(timeout=30)
            deadline = time.monotonic() + 5
            while running(child) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not running(child), "the agent's child outlived the recorder"
            killed = f".{recorder.pid}."  # its scratch folders: p2w-KIND-NS.PID.xxx
            assert [p for p in tmp.iterdir() if killed in p.name], "the killed recorder ran no clean-up"
            after = p2w_rt(
                tmp_path / "p2w.db", "record", "--exec", "sleep 0", *ENDPOINT, "--model", "m", "--task", TASK,
                "--label", "after", tmp=tmp,
            )  # fmt: skip
            assert after.returncode == 0, after.stderr
            assert [p.name for p in tmp.iterdir() if killed in p.name] == []  # swept by the next p2w-rt
        finally:
            if recorder.poll() is None:
                os.killpg(recorder.pid, signal.SIGKILL)
                recorder.wait()
            if pid_file.is_file() and running(pid := int(pid_file.read_text())):
                os.kill(pid, signal.SIGKILL)


def test_a_second_resume_of_a_run_being_resumed_is_refused_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    first = p2w_rt(db, "record", "--exec", "sleep 0", *ENDPOINT, "--model", "m", "--task", TASK, "--label", "k9")
    assert first.returncode == 0, first.stderr
    before = p2w_rt(db, "runs", "--json").stdout

    async def resumed_meanwhile() -> subprocess.CompletedProcess[str]:
        async with open_store(db) as store, resuming(store, await find_run(store, "k9")):  # the winner, here
            return await asyncio.to_thread(p2w_rt, db, "record", "--resume", "k9", "--exec", "sleep 0", *ENDPOINT)

    loser = asyncio.run(resumed_meanwhile())
    assert loser.returncode != 0 and "Traceback" not in loser.stderr, loser.stderr
    said = loser.stderr.strip()
    assert len(said.splitlines()) == 1, said
    assert said.startswith(f"error: run 'k9' is being recorded by another process (process {os.getpid()} on "), said
    assert p2w_rt(db, "runs", "--json").stdout == before  # nothing written: the run is as the winner leaves it
    again = p2w_rt(db, "record", "--resume", "k9", "--exec", "sleep 0", *ENDPOINT)  # the claim was released
    assert again.returncode == 0, again.stderr
