"""The one set of metric names and the one number format every table and JSON output uses.

Names: ``p_web``, ``p_pref``, ``p_avg``, ``intent``, ``success_rate`` (titles P_web, P_pref, P_avg, Intent, SR).
Values are fractions 0..1: three decimals in tables (``0.833``), deltas signed (``+0.083``), full precision
(rounded to 6 places) in JSON. A stored judgment keeps an episode's outcome as ``success`` (0 or 1): its mean
over episodes is ``success_rate``. See docs/design/metrics.md.
"""

from __future__ import annotations

from collections.abc import Mapping

METRICS: tuple[str, ...] = ("p_web", "p_pref", "p_avg", "intent", "success_rate")
"""Run-level figures, in the paper's Table 5 order."""

TITLES: dict[str, str] = {
    "p_web": "P_web",
    "p_pref": "P_pref",
    "p_avg": "P_avg",
    "intent": "Intent",
    "success_rate": "SR",
}

EPISODE_KEYS: dict[str, str] = {m: ("success" if m == "success_rate" else m) for m in METRICS}
"""The key of each metric in a stored judgment's ``metrics`` (immutable events keep ``success``)."""

MISSING = "-"


def episode_figures(metrics: Mapping[str, float]) -> dict[str, float]:
    """A judgment's metrics under the metric names (only those it has)."""
    return {name: metrics[key] for name, key in EPISODE_KEYS.items() if key in metrics}


def figure(value: float | None) -> str:
    """A 0..1 figure as every table prints it: ``0.833``; ``-`` when there is none."""
    return MISSING if value is None else f"{value:.3f}"


def signed(value: float | None) -> str:
    """A change of a 0..1 figure: ``+0.083``, never ``-0.000``."""
    return MISSING if value is None else f"{round(value, 3) + 0.0:+.3f}"


def json_figure(value: float | None) -> float | None:
    """A figure in JSON output: full precision, rounded to 6 places so float noise does not show."""
    return None if value is None else round(value, 6)
