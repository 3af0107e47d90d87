"""Repeated runs of the same tasks: mean and standard deviation of each metric (the paper's Table 8 layout)."""

from p2w_rt.replay.stats._stats import RunStats, stats_of

__all__ = [
    "RunStats",
    "stats_of",
]
