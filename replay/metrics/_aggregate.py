"""Means of the per-episode figures by group: the paper's Table 5 and the ambiguity-level breakdown."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.replay.metrics._collect import GROUP_KEYS, KEY_FIELDS, EpisodeScore
from p2w_rt.replay.metrics._figures import EPISODE_KEYS, json_figure
from p2w_runtime.errors import UserError

DEFAULT_BY = ("architecture", "model", "scheme")


class BadGrouping(UserError):
    """``--by`` names a column that does not exist, or one twice."""


@dataclass(frozen=True, slots=True)
class MetricRow:
    group: tuple[tuple[str, str | int | None], ...]
    episodes: int
    judged: int
    figures: dict[str, float | None]
    """Mean of each metric (``METRICS`` names) over the judged episodes; None when no episode has it."""

    def as_dict(self) -> dict[str, object]:
        figures = {name: json_figure(value) for name, value in self.figures.items()}
        return {**dict(self.group), "episodes": self.episodes, "judged": self.judged, **figures}


def check_by(by: Sequence[str]) -> tuple[str, ...]:
    unknown = [name for name in by if name not in GROUP_KEYS]
    if unknown:
        raise BadGrouping(f"--by: unknown column(s) {', '.join(unknown)}; choose from {', '.join(GROUP_KEYS)}")
    twice = next((name for n, name in enumerate(by) if name in by[:n]), None)
    if twice is not None:  # it would only print the same column twice
        raise BadGrouping(f"--by: column {twice} is given twice; name each column once")
    return tuple(by)


def aggregate(scores: Sequence[EpisodeScore], by: Sequence[str] = DEFAULT_BY) -> list[MetricRow]:
    """One row per distinct value of the ``by`` columns, plus the judge column (``rubric-rules@5``) when several
    judges are present or the scores name the version they were made by: a row never averages two judges, nor two
    versions of one, and says which it averaged."""
    by = check_by(by)
    named = any(s.judge_version for s in scores) or len({s.judge_label for s in scores}) > 1
    if named and "judge" not in by:
        by = (*by, "judge")
    fields = [KEY_FIELDS[name] for name in by]
    groups: dict[tuple[str | int | None, ...], list[EpisodeScore]] = {}
    for score in scores:
        groups.setdefault(tuple([getattr(score, f) for f in fields]), []).append(score)
    rows = []
    for values, members in sorted(groups.items(), key=lambda item: tuple(_sortable(v) for v in item[0])):
        judged = [m.metrics for m in members if m.metrics is not None]
        figures: dict[str, float | None] = {}
        for name, key in EPISODE_KEYS.items():  # ``episode_figures`` of each, read in place
            present = [m[key] for m in judged if key in m]
            figures[name] = statistics.fmean(present) if present else None
        rows.append(MetricRow(tuple(zip(by, values, strict=True)), len(members), len(judged), figures))
    return rows


def _sortable(value: str | int | None) -> tuple[int, str]:
    return (1, "") if value is None else (0, f"{value:>8}" if isinstance(value, int) else value)


def levels_of(scores: Sequence[EpisodeScore]) -> list[int]:
    return sorted({s.level for s in scores if s.level is not None})
