"""The ambiguity-level plot: SR and P_avg per level, one line per group (matplotlib, Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from p2w_rt.replay.metrics._aggregate import MetricRow
from p2w_runtime.errors import UserError


class PlotNotWritable(UserError):
    """``--plot`` names a file that cannot be written (missing folder, a file in the way, no permission)."""


PLOT_FORMATS = ("png", "svg", "pdf")
"""What ``--plot`` writes, chosen by the file's suffix: a raster image, and the two vector formats papers take."""


def plot_format(path: Path) -> str:
    """The format ``path``'s suffix names; a suffix that is none of ``PLOT_FORMATS`` is refused (a ``.svg`` file
    holding PNG bytes opens nowhere)."""
    suffix = path.suffix.lower().removeprefix(".")
    if suffix not in PLOT_FORMATS:
        given = f"cannot write a .{suffix} plot" if suffix else "no suffix to name the format"
        choices = ", ".join(f".{f}" for f in PLOT_FORMATS[:-1]) + f" or .{PLOT_FORMATS[-1]}"
        raise PlotNotWritable(f"--plot {path}: {given}; name the file {choices}")
    return suffix


def check_plot_path(path: Path) -> None:
    """Refuse a plot path of another format than ``PLOT_FORMATS`` or whose folder is missing, before any work (the
    common mistake: a typo in the folder)."""
    plot_format(path)
    folder = path.parent
    if not folder.is_dir():
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise PlotNotWritable(f"--plot {path}: folder {folder} {problem}")


LEVEL_NAMES = {0: "explicit", 2: "most ambiguous"}
"""What the ends of Persona2Web's scale mean, named on the axis only for the levels a plot has."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
SPREAD = 0.5
"""Width (in levels) the series at one level are spread over, so equal points of different series stay apart."""


@dataclass(frozen=True, slots=True)
class LevelSeries:
    """One group's points: ``xs`` is each level shifted by the series' own small offset."""

    label: str
    marker: str
    levels: list[int]
    xs: list[float]
    success_rate: list[float]
    p_avg: list[float]
    """NaN where the group has no figure (the line breaks there)."""


def _label(row: MetricRow) -> str:
    return " / ".join(str(v) for name, v in row.group if name != "level")


def level_series(rows: Sequence[MetricRow]) -> list[LevelSeries]:
    """The series of ``rows`` (grouped by level), each with its own marker and offset."""
    points: dict[str, list[tuple[int, float, float]]] = {}
    for row in rows:
        level = dict(row.group).get("level")
        if isinstance(level, int):
            sr, p_avg = (row.figures.get(name) for name in ("success_rate", "p_avg"))
            points.setdefault(_label(row), []).append(
                (level, float("nan") if sr is None else sr, float("nan") if p_avg is None else p_avg)
            )
    step = SPREAD / len(points) if len(points) > 1 else 0.0
    series = []
    for i, (label, pts) in enumerate(sorted(points.items())):
        pts.sort()
        offset = (i - (len(points) - 1) / 2) * step
        levels = [p[0] for p in pts]
        xs = [level + offset for level in levels]
        series.append(
            LevelSeries(label, MARKERS[i % len(MARKERS)], levels, xs, [p[1] for p in pts], [p[2] for p in pts])
        )
    return series


def level_ticks(levels: Sequence[int]) -> list[str]:
    """Tick labels for the levels present: the number, and what it means at the ends of the scale."""
    return [f"{level}\n({LEVEL_NAMES[level]})" if level in LEVEL_NAMES else str(level) for level in levels]


def plot_levels(rows: Sequence[MetricRow], path: Path) -> Path:
    """Write a plot of SR and P_avg against the ambiguity level, in the format of ``path``'s suffix
    (``PLOT_FORMATS``); ``rows`` must be grouped by level. Every series
    has its own marker and a small horizontal offset, and the legend sits under the plots: seven groups with a
    single point each stay seven visible markers."""
    path = Path(path)
    fmt = plot_format(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = level_series(rows)
    levels = sorted({level for s in series for level in s.levels})
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharex=True, layout="constrained")
    for s in series:
        for ax, ys in ((axes[0], s.success_rate), (axes[1], s.p_avg)):
            ax.plot(s.xs, ys, marker=s.marker, markersize=7, alpha=0.85, label=s.label)
    for ax, title in zip(axes, ("SR", "P_avg"), strict=True):
        ax.set_title(f"{title} by ambiguity level")
        ax.set_xlabel("ambiguity level")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xticks(levels, level_ticks(levels))
        if levels:
            ax.set_xlim(levels[0] - 0.5, levels[-1] + 0.5)
        ax.grid(alpha=0.3)
    if series:
        fig.legend(
            *axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=min(3, len(series)), fontsize=8
        )
    try:
        fig.savefig(path, dpi=120, format=fmt)
    except OSError as exc:
        raise PlotNotWritable(f"--plot {path}: cannot write ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
    return path
