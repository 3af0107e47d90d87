"""Per-episode scores of runs, from their current judgments: the input of every metric table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.replay.metrics._versions import judge_label, newest_by_judge, other_versions, versioned_scores
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
    """None when the episode has no current successful judgment by ``judge`` at ``judge_version``."""
    judge_version: str | None = None
    """The version of ``judge`` the table scores with; None where versions are not told apart."""
    other_versions: tuple[str, ...] = ()
    """The versions of ``judge`` that judged the episode as it is now when ``judge_version`` did not."""

    @property
    def judge_label(self) -> str | None:
        return None if self.judge is None else judge_label(self.judge, self.judge_version)


KEY_FIELDS: dict[str, str] = {
    "architecture": "architecture",
    "agent": "architecture",
    "model": "model",
    "scheme": "scheme",
    "level": "level",
    "judge": "judge_label",
    "run": "label",
}
"""Each column a table groups by (``--by``) -> the field of ``EpisodeScore`` that holds it."""
GROUP_KEYS = tuple(KEY_FIELDS)


async def collect_scores(
    store: EventStore, runs: Sequence[RunInfo], *, judge_id: str | None = None
) -> list[EpisodeScore]:
    """One score per (episode, judge) for every episode of ``runs``; unjudged episodes get ``metrics=None``.

    Without ``judge_id`` every judge that judged the run is reported (one score each). Each judge scores with its
    newest version in ``runs`` (``_versions``): an episode judged only by another version is unjudged.
    """
    judged = [await versioned_scores(store, run.run_id, judge_id) for run in runs]
    version_of = newest_by_judge(judged)
    scores: list[EpisodeScore] = []
    for run, by_episode in zip(runs, judged, strict=True):
        judges: list[str | None] = [*sorted({j for _, j in by_episode})] or [judge_id]
        for episode in await episodes_of(store, run.run_id):
            scheme = episode.scheme or run.started.scheme or "-"
            for judge in judges:
                version = version_of.get(judge) if judge else None
                versions = by_episode.get((episode.stream, judge), {}) if judge else {}
                record = versions.get(version) if version else None
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
                        judge_version=version,
                        other_versions=other_versions(versions, version),
                    )
                )
    return scores


@dataclass(frozen=True, slots=True)
class Outdated:
    """A run's episodes judged by ``judge`` only at ``others``, not at the table's ``version``: left out of its
    figures until ``p2w-rt replay`` judges them again."""

    run: str
    """The run's label."""
    judge: str
    version: str
    episodes: int
    others: tuple[str, ...]


def outdated_of(scores: Sequence[EpisodeScore]) -> list[Outdated]:
    """Per run and judge, the episodes whose only current judgments are by other versions than the table's."""
    found: dict[tuple[str, str, str], list[EpisodeScore]] = {}
    for s in scores:
        if s.other_versions and s.judge is not None and s.judge_version is not None:
            found.setdefault((s.label, s.judge, s.judge_version), []).append(s)
    return [
        Outdated(run, judge, version, len(left), tuple(sorted({v for s in left for v in s.other_versions})))
        for (run, judge, version), left in found.items()
    ]
