"""Per-episode scores of runs, from their current judgments: the input of every metric table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.replay.judges import current_scores
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class EpisodeScore:
    run_id: str
    label: str
    architecture: str
    model: str
    scheme: str
    level: int | None
    task_id: str
    judge: str | None
    metrics: dict[str, float] | None
    """None when the episode has no current successful judgment by ``judge``."""


KEY_FIELDS: dict[str, str] = {
    "architecture": "architecture",
    "agent": "architecture",
    "model": "model",
    "scheme": "scheme",
    "level": "level",
    "judge": "judge",
    "run": "label",
}
"""Each column a table groups by (``--by``) -> the field of ``EpisodeScore`` that holds it."""
GROUP_KEYS = tuple(KEY_FIELDS)


async def collect_scores(
    store: EventStore, runs: Sequence[RunInfo], *, judge_id: str | None = None
) -> list[EpisodeScore]:
    """One score per (episode, judge) for every episode of ``runs``; unjudged episodes get ``metrics=None``.

    Without ``judge_id`` every judge that judged the run is reported (one score each).
    """
    scores: list[EpisodeScore] = []
    for run in runs:
        judged = await current_scores(store, run.run_id, judge_id)
        judges: list[str | None] = [*sorted({j for _, j in judged})] or [judge_id]
        for episode in await episodes_of(store, run.run_id):
            scheme = episode.scheme or run.started.scheme or "-"
            for judge in judges:
                record = judged.get((episode.stream, judge)) if judge else None
                scores.append(
                    EpisodeScore(
                        run_id=run.run_id,
                        label=run.label,
                        architecture=run.started.agent,
                        model=run.started.backbone_model,
                        scheme=scheme,
                        level=episode.level,
                        task_id=episode.task_id,
                        judge=judge,
                        metrics=dict(record.judgment.metrics) if record else None,
                    )
                )
    return scores
