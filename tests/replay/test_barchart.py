"""The grouped bar chart the classify and retrieval plots share: a PNG, or a ``PlotError`` naming the path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p2w_rt.replay.barchart import PlotError, grouped_bars


def test_writes_a_png_and_says_which_path_it_could_not_write(tmp_path: Path) -> None:
    series = [("recorded", [0.5, 1.0]), ("counterfactual", [0.25, 0.75])]
    path = grouped_bars(tmp_path / "bars.png", ["a", "b"], series, title="t", ylabel="y", size=(4.0, 3.0))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = tmp_path / "no-such-folder" / "bars.png"
    with pytest.raises(PlotError, match=re.escape(f"cannot write the plot to {missing}")):
        grouped_bars(missing, ["a"], [("n", [3])], title="t", ylabel="y", size=(4.0, 3.0), counts=True)
