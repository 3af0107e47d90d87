"""`record --exec`: what the adversarial review found. A resume that cannot honour its options (another agent, other
settings) is refused in one line; inline code on the command line is no agent name (it may hold a secret); a stdout
line beyond the reader's limit ends its episode, not the run; a task given twice and a base URL that is no URL are
refused before anything is written. Agents here ask no model: ``sh -c`` one-liners."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from p2w_runtime.exec import agent_name
from tests.helpers.exec_support import TASK, p2w_rt
from tests.helpers.paths import REPO
from tests.helpers.seals_support import rows
from tests.helpers.stored_support import database_text

ENDPOINT = ("--base-url", "http://127.0.0.1:9/v1")  # never called: these agents ask no model
OTHER = "Lena_Fischer_A1"


def _record(db: Path, command: str, *more: str) -> tuple[int, str, str]:
    done = p2w_rt(db, "record", "--exec", command, *ENDPOINT, *more)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_inline_code_is_named_by_its_interpreter_and_its_secret_is_stored_nowhere(tmp_path: Path) -> None:
    assert agent_name(["bash", "-c", "./agent --token tok_X"]) == "exec:bash -c"
    assert agent_name(["/bin/sh", "-lc", "./agent --token tok_X"]) == "exec:sh -lc"
    assert agent_name(["python3", "-c", "print(1)"]) == "exec:python3 -c"
    assert agent_name(["node", "-e", "1"]) == "exec:node -e"
    assert agent_name(["python3", "-u", "/home/me/shop.py", "--token", "tok_X"]) == "exec:shop.py"
    db = tmp_path / "p2w.db"
    code, out, err = _record(db, "sh -c 'true --token tok_LEAK9999'", "--model", "m", "--task", TASK)
    assert code == 0 and "1 no_answer" in out, err
    run = json.loads(p2w_rt(db, "runs", "--json").stdout.splitlines()[0])
    assert (run["agent"], run["label"]) == ("exec:sh -c", "exec-sh -c-m")
    assert "tok_LEAK9999" not in database_text(db)
    assert "tok_LEAK9999" not in db.with_suffix(".jsonl").read_text()


def test_a_resume_is_refused_another_agent_and_other_settings(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    code, out, err = _record(db, "sleep 0", "--model", "m", "--task", TASK, "--label", "k9")
    assert code == 0 and "1 no_answer" in out, err
    own = p2w_rt(db, "record", "--resume", "k9", *ENDPOINT)
    assert own.returncode != 0 and "Traceback" not in own.stderr, own.stderr
    assert own.stderr.strip() == (
        "error: run 'k9' was recorded with other settings: agent 'p2w-rt' (recorded: 'exec:sleep'); "
        "resume it with the agent that recorded it (a resume may change only --concurrency, --chromium, --cache-dir, "
        "--prices, --max-retries, --llm-timeout, --timeout, --base-url, --api-key), "
        "or record a new run under another --label"
    )
    for more, said in ((("--model", "other"), "--model other (recorded: m)"), (("--task", OTHER), "--task " + OTHER)):
        code, _, err = _record(db, "sleep 0", "--resume", "k9", *more)
        assert code != 0 and "run 'k9' was recorded with other settings: " + said in err, err
        assert len(err.strip().splitlines()) == 1
    code, out, err = _record(db, "sleep 0", "--resume", "k9", "--model", "m")  # the recorded value: no conflict
    assert code == 0, err
    runs = p2w_rt(db, "runs", "--json").stdout.splitlines()
    assert [json.loads(line)["agent"] for line in runs] == ["exec:sleep"]
    assert p2w_rt(db, "verify", "k9").returncode == 0


def test_a_resume_names_in_one_line_every_option_that_differs_and_writes_nothing(tmp_path: Path) -> None:
    db, agent = tmp_path / "p2w.db", tmp_path / "agent.sh"
    agent.write_text('echo "{\\"answer\\": \\"$1\\"}"\n')
    code, out, err = _record(db, f"sh {agent} careful", "--model", "m", "--task", TASK, "--label", "k9")
    assert code == 0 and "1 answered" in out, err
    before = rows(db, "SELECT count(*), max(position) FROM events")
    tasks = tmp_path / "tasks"
    shutil.copytree(REPO / "p2w_runtime/demo/sample/tasks", tasks)
    changed = next(tasks.glob(f"*/{TASK}.json"))
    changed.write_text(changed.read_text().replace("gluten", "lactose"))
    for command, more, said in (
        (
            f"sh {agent} reckless",
            ("--har",),
            "--exec: other arguments than the command that recorded it "
            "(exec:agent.sh), --har on (recorded: off); drop them to resume",
        ),
        (
            f"sh {tmp_path}/other.sh careful",
            ("--task", OTHER),
            "agent 'exec:other.sh' (recorded: 'exec:agent.sh'), "
            f"--task {OTHER} (recorded: {TASK}); resume it with the agent that recorded it",
        ),
        (f"sh {agent} careful", ("--tasks", str(tasks)), f"{changed} differs from the file the run carries"),
    ):
        code, _, err = _record(db, command, "--resume", "k9", *more)
        assert code != 0 and len(err.strip().splitlines()) == 1, err
        assert said in err and "'k9'" in err and "--other-dataset" not in err, err  # record has no such option
        assert rows(db, "SELECT count(*), max(position) FROM events") == before
    moved = tmp_path / "moved"  # the same command from another folder resumes it
    moved.mkdir()
    shutil.copy(agent, moved / "agent.sh")
    code, out, err = _record(
        db, f"sh {moved}/agent.sh careful", "--resume", "k9", "--tasks", str(REPO / "p2w_runtime/demo/sample/tasks")
    )
    assert code == 0 and "1 kept from before" in out, err


def test_a_stdout_line_beyond_the_limit_ends_its_episode_only(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    agent = tmp_path / "big.sh"  # one task's agent writes 20 MB on one line, the other's answers
    agent.write_text(
        f'if [ "$P2W_TASK_ID" = {TASK} ]; then python3 -c \'print("x" * 20_000_000)\'; '
        'else echo \'{"answer": "ok"}\'; fi\n'
    )
    code, out, err = _record(db, f"sh {agent}", "--model", "m", "--task", TASK, "--task", OTHER, "--concurrency", "2")
    assert code == 0 and "1 answered" in out and "1 error" in out, (out, err)
    finished = [
        json.loads(line)["payload"]
        for line in p2w_rt(db, "show", "exec-big.sh-m", TASK, "--json").stdout.splitlines()
        if json.loads(line)["type"] == "episode.finished"
    ]
    assert [(f["end_reason"], f["detail"]) for f in finished] == [
        ("error", "the agent wrote a stdout line longer than 16 MiB; it was stopped")
    ]


def test_a_task_given_twice_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    twice = ("--model", "m", "--task", TASK, "--task", OTHER, "--task", TASK)
    for done in (
        p2w_rt(db, "record", "--exec", "sleep 0", *ENDPOINT, *twice),
        p2w_rt(db, "record", *twice),
    ):
        assert (
            done.returncode != 0 and done.stderr.strip() == f"error: --task {TASK} is given twice; name each task once"
        )
    assert not db.exists()


def test_a_base_url_that_is_no_url_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    bad = p2w_rt(db, "record", "--exec", "sleep 0", "--base-url", "not a url", "--model", "m", "--task", TASK)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == (
        "error: LLM endpoint URL 'not a url' (--base-url / OPENAI_BASE_URL) is not an http(s) URL with a host"
    )
    assert not db.exists()
