"""The ambiguity-level plot: SR and P_avg per level, one line per group (matplotlib, Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from p2w_runtime.errors import UserError
from replay.metrics._aggregate import MetricRow


class PlotNotWritable(UserError):
    """``--plot`` names a file that cannot be written (missing folder, a file in the way, no permission)."""


def check_plot_path(path: Path) -> None:
    """Refuse a plot path whose folder is missing, before any work (the common mistake: a typo in the folder)."""
    folder = path.parent
    if not folder.is_dir():
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise PlotNotWritable(f"--plot {path}: folder {folder} {problem}")


def _label(row: MetricRow) -> str:
    return " / ".join(str(v) for name, v in row.group if name != "level")


def plot_levels(rows: Sequence[MetricRow], path: Path) -> Path:
    """Write a PNG of SR and P_avg against the ambiguity level; ``rows`` must be grouped by level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float | None, float | None]]] = {}
    for row in rows:
        level = dict(row.group).get("level")
        if isinstance(level, int):
            series.setdefault(_label(row), []).append(
                (level, row.figures.get("success_rate"), row.figures.get("p_avg"))
            )
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    for label, points in sorted(series.items()):
        points.sort()
        levels = [p[0] for p in points]
        for ax, index in ((axes[0], 1), (axes[1], 2)):
            ax.plot(levels, [float("nan") if p[index] is None else p[index] for p in points], marker="o", label=label)
    for ax, title in zip(axes, ("SR", "P_avg"), strict=True):
        ax.set_title(f"{title} by ambiguity level")
        ax.set_xlabel("ambiguity level (0 = explicit)")
        ax.set_ylim(0, 1.05)
        ax.set_xticks(sorted({level for pts in series.values() for level, _, _ in pts}))
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    try:
        fig.savefig(path, dpi=120, format="png")
    except OSError as exc:
        raise PlotNotWritable(f"--plot {path}: cannot write ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
    return path
