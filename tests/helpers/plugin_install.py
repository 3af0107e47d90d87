"""A distribution ``outside-bench`` installed as pip leaves one, in a folder put on ``PYTHONPATH`` of a fresh
``p2w-rt`` process: how the plugin tests add a benchmark from another package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from p2w_rt.replay.derived import ENTRY_POINT_GROUP

STEPS_JUDGE = '''
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
'''
"""The outside package's judge, as source: it needs ``Judge``, ``JudgeContext``, ``Scorecard``, ``PassSettings``,
``ProducerConfig`` and ``Evidence`` imported before it."""


def install(site: Path, entry: str, module: str | None, group: str = ENTRY_POINT_GROUP) -> None:
    """A distribution ``outside-bench`` as pip leaves it: its module and its ``.dist-info`` with the entry point
    (a plugin, or another group's)."""
    info = site / "outside_bench-0.1.dist-info"
    info.mkdir(parents=True)
    if module is not None:
        (site / "outside_bench.py").write_text(module)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: outside-bench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")


def p2w(site: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``p2w-rt --db DB ARGS`` with ``site`` first on its ``PYTHONPATH``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), "--log-file", str(db) + ".log", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)
