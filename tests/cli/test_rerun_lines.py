"""``rerun``'s lines for an episode whose mismatch has no step or no decision on one side (an agent run with
--exec that exits before its first model call): no ``step None``, no ``None`` for the side that made none."""

from __future__ import annotations

import pytest

from p2w_cli.rerun import _echo_episode, _told
from p2w_runtime.rerun import Mismatch, ReplayedEpisode


def test_a_mismatch_without_a_step_or_a_side_says_so_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    mismatch = Mismatch(None, "ends earlier", "planner call 4b7d23ae6969", None)
    said: list[str] = []
    _told(said.append)(ReplayedEpisode("run/Ann_Lee_A1", "Ann_Lee_A1", mismatch))
    assert said == ["Ann_Lee_A1: differs (ends earlier)"]
    _echo_episode("Ann_Lee_A1", mismatch)
    out = capsys.readouterr().out
    assert "recorded:    planner call 4b7d23ae6969" in out and "re-executed: (none)" in out
    assert "None" not in out
