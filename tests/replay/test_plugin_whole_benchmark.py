"""A whole benchmark from another package (issue 38): one installed distribution whose one entry point (group
``p2w_rt.plugins``) adds a judge, a metrics table, an import format and an agent, with no edit of p2w-rt. Its
runner's file is imported, judged and tabulated, and its agent records a run, through the real ``p2w-rt`` command;
an unknown format or agent, a plugin that cannot load and a ``rerun`` of a run whose agent has no rerun (or is
uninstalled) each stop in one line. The distribution is real metadata
on ``PYTHONPATH``, as ``tests/helpers/plugin_install.py`` installs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from p2w_runtime.demo.examples import example_paths
from tests.helpers.plugin_install import STEPS_JUDGE, install, p2w

PLUGIN = (
    '''
"""outside_bench: a judge, a metrics table and the "outside-steps" runner's file format, registered when loaded."""

from pydantic import BaseModel, ValidationError

from p2w_rt.replay.derived import (
    MetricsTables, PassSettings, Plugin, ProducerConfig, Table, latest_current, register_plugin, register_tables,
    run_heads,
)
from p2w_rt.replay.judges import Judge, JudgeContext, Scorecard, read_judgments
from p2w_rt.schemas import Evidence, ParsedAction
from p2w_runtime.agent import EpisodeOutcome, RecordSummary
from p2w_runtime.errors import UserError
from p2w_runtime.importers import Header, ImportFormat, TrajectoryImportError, register_format
from p2w_runtime.integrations import AgentIntegration, register_agent
from p2w_runtime.recording import load_tasks, open_run


'''
    + STEPS_JUDGE
    + '''

async def steps_tables(store, runs, judge):
    rows = []
    for info in runs:
        current = latest_current(await read_judgments(store, info.run_id), await run_heads(store, info.run_id))
        points = [r.judgment.points["steps"] for (_, judge_id), r in current.items() if judge_id == StepsJudge.id]
        if points:
            rows.append((info.label, len(points), sum(points) / len(points)))
    if not rows:
        return []
    return [Table("outside_steps", "Outside bench: steps per episode", ("run", "episodes", "mean_steps"), tuple(rows))]


class Step(BaseModel):
    url: str
    reason: str
    action: str


class RunnerFile(BaseModel):
    task: str
    model: str
    steps: list[Step]
    answer: str | None = None


def parse(path, data):
    try:
        return RunnerFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise TrajectoryImportError(path, ".".join(map(str, error["loc"])), error["msg"]) from None


def header(path, file, name):
    return Header(task_id=file.task, model=file.model, model_is_tag=False, field="task")


def emit(file, builder, *, phase, captcha, runner=None):
    for number, step in enumerate(file.steps, start=1):
        builder.observation(step=number, url=step.url)
        builder.rationale(step=number, text=step.reason)
        name, *args = step.action.split()
        builder.action(step=number, raw=step.action, parsed=ParsedAction(name=name, args=args))
    end = "answered" if file.answer else "no_answer"
    builder.finished(end_reason=end, answer=file.answer, final_url=file.steps[-1].url, steps=len(file.steps))


async def record_fixed_stop(store, request, progress, *, hosting):
    """The outside agent: visits nothing, answers each task with the same stop, through the recording API."""
    if request.worker or request.resume:
        raise UserError("--agent fixed-stop records a new run with --concurrency, not --worker or --resume")
    tasks = load_tasks(request.tasks_dir)
    outcomes = []
    async with await open_run(
        store, label=request.label or f"fixed-stop-{request.model}", agent="fixed-stop", model=request.model,
        tasks=tasks, only=request.task_ids or None, history=request.history_dir,
    ) as run:
        for task in run.todo():
            async with run.episode(task) as episode:
                await episode.observe(url=task.start_url, title="not visited")
                await episode.action("stop [nothing to buy]", ParsedAction(name="stop", args=["nothing to buy"]))
                end = await episode.end("answered", "nothing to buy")
            outcomes.append(EpisodeOutcome(episode.stream, task.task_id, end.end_reason, end.answer, end.steps))
    return RecordSummary(run.run_id, run.label, 0, outcomes)


register_plugin(Plugin(name="outside-bench", kind="judge", producers=(StepsJudge,)))
register_tables(MetricsTables("outside-bench", frozenset({StepsJudge.id}), steps_tables))
PLUGIN = register_format(ImportFormat("outside-steps", "the outside runner: one JSON file per task", "outside-agent",
                                      parse, header, emit))
register_agent(AgentIntegration("fixed-stop", "another package's agent: answers each task at once.", record_fixed_stop))
'''
)

RUNNER_FILE = {
    "task": "Jordan_Park_A1",
    "model": "outside-model",
    "steps": [
        {"url": "http://shop.test/", "reason": "search for the shoes", "action": "type 3 running shoes"},
        {"url": "http://shop.test/search", "reason": "the first result fits", "action": "stop Trail shoes, size 42"},
    ],
    "answer": "Trail shoes, size 42",
}


def _import_args(runner_file: Path, fmt: str = "outside-steps") -> list[str]:
    bundled = example_paths()
    return [
        *("import-trajectories", "--format", fmt, "--label", "outside-run"),
        *("--tasks", str(bundled.tasks_dir), "--history", str(bundled.history_dir), str(runner_file)),
    ]


def test_one_entry_point_adds_a_judge_a_metrics_table_and_an_import_format(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    runner_file = tmp_path / "outside_Jordan_Park_A1.json"
    runner_file.write_text(json.dumps(RUNNER_FILE))

    listed = p2w(site, db, "import-trajectories", "--help")
    assert listed.returncode == 0 and "outside-steps: the outside runner" in " ".join(listed.stdout.split())
    imported = p2w(site, db, *_import_args(runner_file))
    assert imported.returncode == 0, imported.stderr
    assert "label outside-run, outside-steps): 1 episode" in imported.stdout and "imported 1," in imported.stdout

    judged = p2w(site, db, "replay", "outside-run", "--judge", "outside-steps", "--json")
    assert judged.returncode == 0, judged.stderr
    (row,) = [json.loads(line) for line in judged.stdout.splitlines() if line.startswith("{")]
    assert (row["judge"], row["task_id"], row["points"]) == ("outside-steps", "Jordan_Park_A1", {"steps": 2})

    table = p2w(site, db, "metrics", "outside-run")
    assert table.returncode == 0, table.stderr
    assert "Outside bench: steps per episode" in table.stdout and "outside-run" in table.stdout
    assert "P_web" not in table.stdout, "no empty Persona2Web table above the plugin's own"
    as_json = p2w(site, db, "metrics", "outside-run", "--judge", "outside-steps", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert rows == [{"table": "outside_steps", "run": "outside-run", "episodes": 1, "mean_steps": 2.0}]
    as_csv = p2w(site, db, "metrics", "outside-run", "--format", "csv")
    assert as_csv.stdout.splitlines() == ["run,episodes,mean_steps", "outside-run,1,2.0"], as_csv.stderr

    without = p2w(tmp_path / "empty", db, "metrics", "outside-run", "--format", "json")
    assert without.returncode == 0 and "outside_steps" not in without.stdout, "uninstalled, its table is gone"


def test_the_installed_entries_come_after_the_built_in_ones_in_every_registry(tmp_path: Path) -> None:
    """Each registry loads the entry point on its first lookup; the one object registered in all four."""
    site = tmp_path / "site"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    listing = (
        "from p2w_rt.replay.derived import family, metrics_tables\n"
        "from p2w_runtime.importers import import_formats\n"
        "from p2w_runtime.integrations import agents\n"
        "print(list(import_formats()), list(agents()), list(metrics_tables()), family('judge').ids[-1])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    done = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("] ") == [
        "['p2w-agentoccam', 'p2w-browser-use', 'outside-steps'",
        "['own', 'browser-use', 'fixed-stop'",
        "['agenticshop', 'outside-bench'",
        "outside-steps\n",
    ]


def test_a_bad_file_of_the_plugins_format_names_file_and_field_and_writes_nothing(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    runner_file = tmp_path / "outside_Jordan_Park_A1.json"
    runner_file.write_text(json.dumps({**RUNNER_FILE, "steps": [{"url": "http://shop.test/"}]}))
    failed = p2w(site, db, *_import_args(runner_file))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    (line,) = failed.stderr.splitlines()
    assert str(runner_file) in line and "field steps.0.reason" in line
    assert "outside-run" not in p2w(site, db, "runs").stdout


def test_an_unknown_format_is_one_line_and_exit_2(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    runner_file = tmp_path / "outside_Jordan_Park_A1.json"
    runner_file.write_text(json.dumps(RUNNER_FILE))
    unknown = p2w(site, db, *_import_args(runner_file, "no-such-format"))
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    (line,) = [line for line in unknown.stderr.splitlines() if line.startswith("Error")]
    assert "'no-such-format' is not one of 'p2w-agentoccam', 'p2w-browser-use', 'outside-steps'" in line
    uninstalled = p2w(tmp_path / "empty", db, *_import_args(runner_file))
    assert uninstalled.returncode == 2 and "'outside-steps' is not one of" in uninstalled.stderr


def test_a_plugin_that_cannot_load_stops_import_and_metrics_in_one_line(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench_gone:PLUGIN", None)
    runner_file = tmp_path / "outside_Jordan_Park_A1.json"
    runner_file.write_text(json.dumps(RUNNER_FILE))
    for command in (_import_args(runner_file, "p2w-agentoccam"), ["metrics", "outside-run"]):
        failed = p2w(site, db, *command)
        assert failed.returncode != 0 and "Traceback" not in failed.stderr, command
        (line,) = failed.stderr.splitlines()
        assert "plugin outside = 'outside_bench_gone:PLUGIN'" in line and "ModuleNotFoundError" in line, command
    assert "outside-run" not in p2w(site, db, "runs").stdout, "nothing was imported"


def _record_args(*options: str) -> list[str]:
    return ["record", "--agent", "fixed-stop", "--model", "outside-model", "--task", "Lena_Fischer_A1", *options]


def test_an_installed_agent_records_a_run_that_lists_verifies_and_judges(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    listed = p2w(site, db, "record", "--help")
    assert listed.returncode == 0 and "fixed-stop: another package's agent" in " ".join(listed.stdout.split())

    recorded = p2w(site, db, *_record_args("--label", "outside-agent-run"))  # the bundled sample tasks
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout.startswith("recorded outside-agent-run (") and "1 episode; 1 answered" in recorded.stdout
    runs = p2w(site, db, "runs")
    (line,) = [line for line in runs.stdout.splitlines() if "outside-agent-run" in line]
    assert "fixed-stop" in line and "outside-model" in line and "completed" in line, runs.stdout
    verified = p2w(site, db, "verify", "outside-agent-run")
    assert verified.returncode == 0 and verified.stdout.startswith("ok: 2 streams"), verified.stdout + verified.stderr
    shown = p2w(site, db, "show", "outside-agent-run")
    assert "Lena_Fischer_A1" in shown.stdout and "answered" in shown.stdout, shown.stderr
    judged = p2w(site, db, "replay", "outside-agent-run", "--judge", "outside-steps", "--json")
    assert judged.returncode == 0, judged.stderr
    (row,) = [json.loads(line) for line in judged.stdout.splitlines() if line.startswith("{")]
    assert (row["task_id"], row["points"]) == ("Lena_Fischer_A1", {"steps": 1})

    refused = p2w(site, db, "rerun", "outside-agent-run")  # its integration has no rerun
    assert refused.returncode == 2 and refused.stdout == "", refused.stdout
    assert refused.stderr.splitlines() == [
        "error: run 'outside-agent-run' was recorded by agent 'fixed-stop', whose integration (record --agent "
        "fixed-stop) has no rerun: p2w-rt rerun outside-agent-run --exec CMD re-executes it if it runs as a command"
    ]
    gone = p2w(tmp_path / "empty", db, "rerun", "outside-agent-run")  # the package uninstalled
    assert gone.returncode == 2 and gone.stdout == "", gone.stdout
    assert gone.stderr.splitlines() == [
        "error: run 'outside-agent-run' was recorded by agent 'fixed-stop', which no installed agent integration "
        "records (own, browser-use): p2w-rt rerun outside-agent-run --exec CMD re-executes it (CMD: the command "
        "that starts that agent)"
    ]


def test_an_installed_agent_refuses_what_it_does_not_record_before_anything_is_written(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    refused = p2w(site, db, *_record_args("--worker", "--label", "w"))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.splitlines()
    assert "--agent fixed-stop records a new run" in line
    assert not db.exists(), "nothing written, no empty database left"


def test_an_unknown_agent_is_one_line_and_exit_2(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    unknown = p2w(site, db, "record", "--agent", "no-such-agent", "--model", "m")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    (line,) = [line for line in unknown.stderr.splitlines() if line.startswith("Error")]
    assert (
        line == "Error: Invalid value for '--agent': 'no-such-agent' is not one of 'own', 'browser-use', 'fixed-stop'."
    )
    uninstalled = p2w(tmp_path / "empty", db, *_record_args())
    assert uninstalled.returncode == 2 and "'fixed-stop' is not one of 'own', 'browser-use'." in uninstalled.stderr
    assert not db.exists()
