"""Errors a user causes end in one line naming the file or option, a non-zero exit and nothing written.

Tests run as root, so "unwritable" is made in ways root cannot bypass: a path under a regular file (every
``mkdir`` / ``open`` below it fails with ENOTDIR), or a new file in ``/proc`` (the kernel refuses to create it).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import drifted_schemas
from p2w_runtime.data._json import MAX_DEPTH
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.llm import LlmClient, LlmConfigError
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.builders import build
from tests.helpers.judge_replies import answer

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def one_error_line(stderr: str, *names: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def events(db: Path) -> int:
    if not db.exists():
        return 0
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    """A regular file: anything "under" it cannot be created, not even by root."""
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path


# -- the log file, the home folder ------------------------------------------------------------------------------


def cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in a fresh process: logging is set up once per process, so these need their own."""
    return subprocess.run(
        [P2W_RT, "--db", str(tmp_path / "p2w.db"), *args], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.parametrize("how", ["option under a regular file", "env var in /proc"])
def test_an_unwritable_log_file_is_one_line_and_help_still_works(tmp_path: Path, a_file: Path, how: str) -> None:
    log = a_file / "p2w-rt.jsonl" if how.startswith("option") else Path("/proc/p2w-rt.jsonl")
    args = ["--log-file", str(log)] if how.startswith("option") else []
    env = {**os.environ, "P2W_LOG_FILE": str(log)}
    done = cli(tmp_path, *args, "runs", env=env)
    assert done.returncode == 2
    one_error_line(done.stderr, str(log), "--log-file", "P2W_LOG_FILE")
    assert not (tmp_path / "p2w.db").exists()

    helped = cli(tmp_path, *args, "runs", "--help", env=env)
    assert helped.returncode == 0 and "List the runs in the store" in helped.stdout, helped.stderr
    helped = cli(tmp_path, *args, "history", "index", "-h", env=env)
    assert helped.returncode == 0 and "Build every persona's index cache" in helped.stdout, helped.stderr


def test_an_unwritable_home_is_one_line_naming_the_log_file(tmp_path: Path, a_file: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("P2W_LOG_FILE", "XDG_STATE_HOME", "XDG_CACHE_HOME")}
    env["HOME"] = str(a_file / "home")
    done = cli(tmp_path, "runs", env=env)
    assert done.returncode == 2
    one_error_line(done.stderr, str(a_file / "home"), "--log-file")
    assert not (tmp_path / "p2w.db").exists()


# -- record ---------------------------------------------------------------------------------------------------------


def test_a_chromium_that_will_not_start_is_one_line(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "p2w.db"
    code, _, err = invoke(
        "--db", str(db), "record", "--model", "scripted-model", "--base-url", scripted_llm.base_url,
        "--api-key", "sk-x", "--scheme", "no-history", "--task", "Lena_Fischer_A3", "--chromium", "/bin/false",
    )  # fmt: skip
    assert code == 1
    one_error_line(err, "/bin/false", "--chromium")
    assert not db.exists(), "the database this command created holds nothing and is not left behind"
    assert scripted_llm.chat_requests == []
    db.write_bytes(b"")
    invoke("--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "mine")
    before = events(db)
    code, _, err = invoke(
        "--db", str(db), "record", "--model", "scripted-model", "--base-url", scripted_llm.base_url,
        "--api-key", "sk-x", "--scheme", "no-history", "--task", "Lena_Fischer_A3", "--chromium", "/bin/false",
    )  # fmt: skip
    assert code == 1 and before > 0 and events(db) == before, "an existing database keeps everything it held"


@pytest.mark.parametrize("url", ["not a url", "ftp://models.example/v1", "http:///v1", "http://host:port/v1"])
def test_an_unusable_endpoint_url_fails_at_once(tmp_path: Path, url: str) -> None:
    with pytest.raises(LlmConfigError, match="not an http"):
        LlmClient("m", base_url=url, api_key="sk-whatever")
    db = tmp_path / "p2w.db"
    started = time.monotonic()
    code, _, err = invoke(
        "--db", str(db), "record", "--model", "m", "--base-url", url, "--api-key", "sk-x",
        "--scheme", "no-history", "--task", "Lena_Fischer_A3",
    )  # fmt: skip
    assert code == 1 and time.monotonic() - started < 20  # no retries with backoff, no browser started
    one_error_line(err, "--base-url", "OPENAI_BASE_URL")
    assert events(db) == 0


# -- JSON nested too deep -------------------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [100_000, MAX_DEPTH + 1])
def test_deeply_nested_json_files_are_one_line_each(tmp_path: Path, depth: int) -> None:
    """100,000 levels broke json.loads (RecursionError); a few hundred broke pydantic's serialiser later."""
    db = tmp_path / "p2w.db"
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    task = json.loads((sample_tasks_dir() / "personalization_3" / "Lena_Fischer_A3.json").read_text())
    text = json.dumps(task)[:-1] + f', "geolocation": {{"x": {nested(depth)}}}}}'
    (tasks / "Lena_Fischer_A3.json").write_text(text)
    code, _, err = invoke(
        "--db", str(db), "record", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "sk-x",
        "--scheme", "no-history", "--tasks", str(tasks),
    )  # fmt: skip
    assert code != 0
    one_error_line(err, str(tasks / "Lena_Fischer_A3.json"), "nested")

    history = tmp_path / "history"
    history.mkdir()
    (history / "Lena_Fischer.json").write_text(f'[{{"type": "search", "object": {nested(depth)}}}]')
    code, _, err = invoke("history", "index", "--history", str(history), "--cache-dir", str(tmp_path / "cache"))
    assert code != 0
    one_error_line(err, str(history / "Lena_Fischer.json"), "nested")

    trajectory = tmp_path / "on_gpt_Lena_Fischer_A3.json"
    trajectory.write_text(f'{{"steps": {nested(depth)}}}')
    code, _, err = invoke(
        "--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "deep",
        str(trajectory),
    )  # fmt: skip
    assert code != 0
    one_error_line(err, str(trajectory), "nested")
    assert events(db) == 0


# -- metrics ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    db = tmp_path / "r.db"
    build(db)
    assert invoke("--db", str(db), "replay", "cli-run", "--judge", "rubric-rules")[0] == 0
    return db


def test_metrics_plot_that_cannot_be_written_is_one_line_and_prints_nothing(
    judged: Path, tmp_path: Path, a_file: Path
) -> None:
    for plot, problem in (
        (tmp_path / "no-such-folder" / "levels.png", "does not exist"),
        (a_file / "levels.png", "is not a folder"),
        (Path("/proc/levels.png"), "cannot write"),
    ):
        code, out, err = invoke("--db", str(judged), "metrics", "cli-run", "--plot", str(plot))
        assert code == 1 and out == ""
        one_error_line(err, "--plot", str(plot), problem)
        assert not plot.exists()


def test_metrics_with_an_unknown_judge_exits_non_zero(judged: Path) -> None:
    code, out, err = invoke("--db", str(judged), "metrics", "cli-run", "--judge", "nosuch")
    assert code == 1 and out == ""
    one_error_line(err, "--judge", "nosuch", "rubric-rules")


def test_metrics_csv_is_one_csv(judged: Path) -> None:
    """Two levels in the run: the CSV used to carry the level breakdown below the main table, a second header."""
    code, out, err = invoke("--db", str(judged), "metrics", "cli-run", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0][:3] == ["architecture", "model", "scheme"]
    assert len(rows) == 2 and {len(r) for r in rows} == {len(rows[0])}, out
    assert "--by" in err
    code, out, _ = invoke("--db", str(judged), "metrics", "cli-run", "--format", "csv", "--by", "model,level")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:2] == ["model", "level"] and [r[1] for r in rows[1:]] == ["0", "2"]


@pytest.mark.parametrize("command", [("metrics", "--by", "run"), ("classify", "--summary", "--json"), ("stats",)])
def test_a_run_named_twice_is_refused_naming_it(judged: Path, command: tuple[str, ...]) -> None:
    """Named twice (alike, or by label and id prefix), a run would count twice: metrics said 48/48 judged of a
    24-episode run, stats two runs with a std of 0."""
    run_id = json.loads(invoke("--db", str(judged), "runs", "--json")[1].splitlines()[0])["run_id"]
    before = events(judged)
    for refs, how in (
        (["cli-run", "cli-run"], "twice: name"),
        (["cli-run", run_id[:8]], f"'cli-run' and '{run_id[:8]}'"),
    ):
        code, out, err = invoke("--db", str(judged), command[0], *refs, *command[1:])
        assert code == 2 and out == ""
        one_error_line(err, f"run 'cli-run' ({run_id}) is named twice", how)
    assert events(judged) == before


def test_an_export_of_a_run_named_twice_is_refused_and_writes_nothing(judged: Path, tmp_path: Path) -> None:
    tables = tmp_path / "tables"
    code, out, err = invoke(
        "--db", str(judged), "export", "cli-run", "cli-run", "--format", "parquet", "-o", str(tables)
    )
    assert code == 2 and out == "" and not tables.exists()
    one_error_line(err, "run 'cli-run' (", "is named twice")


def test_an_id_prefix_of_two_runs_is_ambiguous_naming_both(judged: Path) -> None:
    other = build(judged, label="other-run")
    first = json.loads(invoke("--db", str(judged), "runs", "--json")[1].splitlines()[0])["run_id"]
    prefix = os.path.commonprefix([first, other])
    assert prefix, "two runs made in one second share the start of their time-ordered ids"
    code, out, err = invoke("--db", str(judged), "show", prefix)
    assert code == 2 and out == ""
    one_error_line(err, f"run {prefix!r}", "is ambiguous", f"{first} (cli-run)", f"{other} (other-run)")


def test_metrics_by_a_column_twice_is_refused(judged: Path) -> None:
    code, out, err = invoke("--db", str(judged), "metrics", "cli-run", "--by", "level,level")
    assert code == 1 and out == ""
    one_error_line(err, "--by: column level is given twice")


# -- replay: cached failures ----------------------------------------------------------------------------------------


def test_cached_failed_judgments_fail_every_replay_until_retried(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "r.db"
    build(db)
    judge = ("replay", "cli-run", "--judge", "rubric-llm", "--base-url", scripted_llm.base_url, "--api-key", "k")
    # Alex_Garcia_B1 gave no answer: its judge model never replies JSON, the two others are judged
    scripted_llm.handle_with(lambda request: answer(request) if "$59" in json.dumps(request) else "no JSON here")
    code, _, err = invoke("--db", str(db), *judge)
    assert code == 1 and "judged 3, cached 0, failed 1" in err  # judged: made by the pass, the failure included

    asked = len(scripted_llm.chat_requests)
    for _ in range(2):  # every time, not only the first
        code, out, err = invoke("--db", str(db), *judge)
        assert code == 1 and "judged 0, cached 3, failed 1" in err and "--retry-failed" in err
        assert "cached failed  Alex_Garcia_B1" in out
    assert len(scripted_llm.chat_requests) == asked, "a cached failure is reported, not paid for again"
    for flags, cached in (((), 3), (("--retry-failed",), 2)):  # the dry run estimates what the real pass would do
        code, out, _ = invoke("--db", str(db), *judge, "--dry-run", "--json", *flags)
        assert code == 0 and json.loads(out)["cached"] == cached

    scripted_llm.handle_with(answer)
    code, _, err = invoke("--db", str(db), *judge, "--retry-failed")
    assert code == 0 and "judged 1, cached 2, failed 0" in err
    assert len(scripted_llm.chat_requests) > asked
    assert invoke("--db", str(db), *judge)[0] == 0


@pytest.mark.parametrize(
    "args",
    [
        ("replay", "cli-run", "--judge", "rubric-llm", "--temperature", "nan"),
        ("replay", "cli-run", "--retriever", "default", "--threshold", "inf"),
        ("classify", "cli-run", "--classifier", "llm", "--temperature", "-inf"),
        ("history", "search", "Alex_Garcia", "chinos", "--threshold", "nan"),
        ("record", "--model", "m", "--llm-timeout", "nan"),  # a range of click's lets nan through
        ("record", "--exec", "sleep 0", "--model", "m", "--timeout", "nan"),
        ("record", "--model", "m", "--page-timeout", "inf"),
        ("demo-model", "serve", "--latency", "nan"),
    ],
)
def test_a_number_that_is_not_finite_is_refused_naming_the_option(
    tmp_path: Path, scripted_llm: ScriptedLlm, args: tuple[str, ...]
) -> None:
    """JSON has no NaN or infinity: sent to a model it was a traceback, stored it read back as null."""
    db = tmp_path / "r.db"
    build(db)
    before = events(db)
    endpoint = ("--base-url", scripted_llm.base_url, "--api-key", "k") if args[0] in ("replay", "classify") else ()
    code, _, err = invoke("--db", str(db), *args, *endpoint)
    assert code == 2 and "not a finite number" in err and f"'{args[-2]}'" in err, err
    assert events(db) == before and scripted_llm.chat_requests == []


def test_history_index_json(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    for persona in ("Ann_Lee", "Bo_Chen"):
        entries = [{"timestamp": "2024-01-01", "type": "search", "object": f"{persona} item {i}"} for i in range(3)]
        (history / f"{persona}.json").write_text(json.dumps(entries))
    index = ("history", "index", "--json", "--history", str(history), "--cache-dir", str(tmp_path / "cache"))
    code, out, _ = invoke(*index)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [(r["persona"], r["entries"], r["encoded"], r["from_cache"]) for r in rows] == [
        ("Ann_Lee", 3, 3, 0),
        ("Bo_Chen", 3, 3, 0),
    ]
    assert all(len(r["index_hash"]) == 64 and r["model_id"] for r in rows)
    code, out, _ = invoke(*index)
    assert code == 0 and [json.loads(line)["from_cache"] for line in out.splitlines()] == [3, 3]


# -- schema export --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["under a regular file", "a name too long, in a new folder"])
def test_schema_export_where_no_folder_can_be_made_is_one_line_and_leaves_nothing(
    tmp_path: Path, a_file: Path, where: str
) -> None:
    target = a_file / "schemas" if where.startswith("under") else tmp_path / "new" / ("x" * 256)
    before = sorted(tmp_path.rglob("*"))
    code, out, err = invoke("--db", str(tmp_path / "p2w.db"), "schema", "export", "--dir", str(target))
    assert code == 1 and out == ""
    one_error_line(err, str(target), "cannot write the schema files")
    assert sorted(tmp_path.rglob("*")) == before, "not the folders it made, nor a file"


def test_schema_export_into_a_new_folder_writes_every_file_and_no_other(tmp_path: Path) -> None:
    target = tmp_path / "new" / "json"
    code, out, _ = invoke("--db", str(tmp_path / "p2w.db"), "schema", "export", "--dir", str(target))
    assert code == 0 and out == f"wrote {len(list(target.iterdir()))} schema files to {target}\n"
    assert drifted_schemas(target) == [] and all(p.suffix == ".json" for p in target.iterdir())
