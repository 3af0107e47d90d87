"""A benchmark from another package (issue 38): an installed distribution naming a plugin under the entry point
group ``p2w_rt.plugins`` adds a ``--judge`` choice with no edit of p2w-rt; one whose plugin cannot be loaded is
named in one line. The distribution is real metadata on ``PYTHONPATH`` (a ``.dist-info`` folder, as pip writes
it), read by ``importlib.metadata`` in a fresh ``p2w-rt`` process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from p2w_rt.replay.judges import read_judgments
from p2w_runtime.store import open_store
from tests.helpers.builders import make_run
from tests.helpers.plugin_install import STEPS_JUDGE, install, p2w

PLUGIN = (
    """
from p2w_rt.replay.derived import PassSettings, Plugin, ProducerConfig, register_plugin
from p2w_rt.replay.judges import Judge, JudgeContext, Scorecard
from p2w_rt.schemas import Evidence


"""
    + STEPS_JUDGE
    + """

PLUGIN = register_plugin(Plugin(name="outside-bench", kind="judge", producers=(StepsJudge,)))
"""
)


def recorded_run(db: Path) -> str:
    async def build() -> str:
        async with open_store(db, create=True) as store:
            return await make_run(store, ("Alex_Garcia_A1",))

    return asyncio.run(build())


def test_an_installed_package_adds_a_judge_with_no_edit_of_p2w_rt(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench:PLUGIN", PLUGIN)
    run_id = recorded_run(db)
    listed = p2w(site, db, "replay", "--help")
    assert listed.returncode == 0 and "outside-steps" in listed.stdout, listed.stderr
    judged = p2w(site, db, "replay", run_id, "--judge", "outside-steps", "--json")
    assert judged.returncode == 0, judged.stderr
    (row,) = [json.loads(line) for line in judged.stdout.splitlines() if line.startswith("{")]
    assert (row["judge"], row["points"]) == ("outside-steps", {"steps": 2})
    without = p2w(tmp_path / "empty", db, "replay", "--help")
    assert without.returncode == 0 and "outside-steps" not in without.stdout


def test_a_plugin_that_cannot_load_is_named_in_one_line_and_nothing_is_judged(tmp_path: Path) -> None:
    site, db = tmp_path / "site", tmp_path / "runs.db"
    install(site, "outside = outside_bench_gone:PLUGIN", None)
    run_id = recorded_run(db)
    failed = p2w(site, db, "replay", run_id, "--judge", "rubric-rules")
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    (line,) = [line for line in failed.stderr.splitlines() if "outside_bench_gone" in line]
    assert "plugin outside = 'outside_bench_gone:PLUGIN'" in line and "ModuleNotFoundError" in line

    async def judgments() -> int:
        async with open_store(db) as store:
            return len(await read_judgments(store, run_id))

    assert asyncio.run(judgments()) == 0, "nothing was judged"
    assert p2w(site, db, "runs").returncode == 0, "a command that looks up no plugin is not stopped by a broken one"
