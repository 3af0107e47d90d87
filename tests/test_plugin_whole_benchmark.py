"""A whole benchmark from another package (issue 38): one installed distribution whose one entry point (group
``p2w_rt.plugins``) adds a judge, a metrics table and an import format, with no edit of p2w-rt. Its runner's file
is imported, judged and tabulated through the real ``p2w-rt`` command; an unknown format and a plugin that cannot
load each stop in one line. The distribution is real metadata on ``PYTHONPATH``, as ``test_plugin_entry_points``
installs it."""

from __future__ import annotations

import json
from pathlib import Path

from test_plugin_entry_points import install, p2w

from p2w_runtime.demo.examples import example_paths

PLUGIN = '''
"""outside_bench: a judge, a metrics table and the "outside-steps" runner's file format, registered when loaded."""

from pydantic import BaseModel, ValidationError

from p2w_rt.replay.derived import (
    MetricsTables, PassSettings, Plugin, ProducerConfig, Table, latest_current, register_plugin, register_tables,
    run_heads,
)
from p2w_rt.replay.judges import Judge, JudgeContext, Scorecard, read_judgments
from p2w_rt.schemas import Evidence, ParsedAction
from p2w_runtime.importers import Header, ImportFormat, TrajectoryImportError, register_format


class StepsConfig(ProducerConfig):
    pass


class StepsJudge(Judge[StepsConfig]):
    """Awards a point per step the episode took, up to three."""

    id = "outside-steps"
    version = "1"
    description = "another package's judge"

    def configure(self, settings: PassSettings) -> StepsConfig:
        return StepsConfig()

    async def judge(self, trajectory, ctx: JudgeContext) -> Scorecard:
        card = Scorecard()
        card.award("steps", min(len(trajectory.actions), 3), 3.0, Evidence(note="steps taken"))
        return card


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


register_plugin(Plugin(name="outside-bench", kind="judge", producers=(StepsJudge,)))
register_tables(MetricsTables("outside-bench", frozenset({StepsJudge.id}), steps_tables))
PLUGIN = register_format(ImportFormat("outside-steps", "the outside runner: one JSON file per task", "outside-agent",
                                      parse, header, emit))
'''

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
