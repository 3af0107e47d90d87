"""Judge against judge for one episode (``/run/RUN/episode/EPISODE/judges``): every current judgment of the episode
(the rules, an LLM judge, each person's labels) and every current classification, side by side, one row per metric,
rubric point and error label, each cell with its evidence, and the rows where they disagree marked.

Rows pair what means the same across raters: a metric by name, a rubric point by its key (as a share of its
maximum, so points of different scales compare), and an error label by name, whether a person gave it as the point
``error.LABEL`` or a classifier as a label (``agree`` pairs them the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from p2w_rt.replay.agreement import ERROR_POINT
from p2w_rt.replay.classify import ALL_LABELS, ClassificationRecord
from p2w_rt.replay.judges import JudgmentRecord
from p2w_rt.schemas import Evidence

KINDS = ("metric", "point", "error label")


@dataclass(frozen=True, slots=True)
class Cell:
    """One rater's value of one row, with its evidence."""

    value: float
    top: float = 1.0
    evidence: Evidence | None = None

    @property
    def share(self) -> float:
        return self.value / self.top if self.top else self.value


@dataclass(frozen=True, slots=True)
class Row:
    kind: str
    """``metric``, ``point`` or ``error label``."""
    name: str
    cells: list[Cell | None]
    """One per rater, in the page's rater order; None where that rater gave nothing for this row."""

    @property
    def disagree(self) -> bool:
        return len({round(c.share, 6) for c in self.cells if c is not None}) > 1


@dataclass(slots=True)
class JudgesPage:
    run_id: str
    run_label: str
    episode_id: str
    task_id: str
    raters: list[str]
    """Judge ids (``human:NAME`` for a person) then ``classify:ID`` for each classifier."""
    versions: list[str]
    rows: list[Row] = field(default_factory=list)
    stale: int = 0
    """Judgments and classifications of an older trajectory of this episode, left out."""

    @property
    def disagreements(self) -> int:
        return sum(row.disagree for row in self.rows)


def judges_page(
    run: tuple[str, str],
    episode: tuple[str, str, str],
    head: str,
    judgments: Sequence[JudgmentRecord],
    classifications: Sequence[ClassificationRecord],
) -> JudgesPage:
    """``run``: (id, label); ``episode``: (stream, episode id, task id); ``head``: the episode's trajectory hash (only
    judgments and classifications of the episode as it is now are compared, the latest of each rater)."""
    stream, episode_id, task_id = episode
    mine = [r.judgment for r in judgments if r.judgment.episode_stream == stream and r.judgment.status == "ok"]
    labelled = [
        r.classification
        for r in classifications
        if r.classification.episode_stream == stream and r.classification.status == "ok"
    ]
    latest = {j.judge_id: j for j in mine if j.trajectory_hash == head}
    classified = {c.classifier_id: c for c in labelled if c.trajectory_hash == head}
    stale = sum(j.trajectory_hash != head for j in mine) + sum(c.trajectory_hash != head for c in labelled)
    judges = sorted(latest, key=lambda j: (j.startswith("human:"), j))
    page = JudgesPage(
        run[0],
        run[1],
        episode_id,
        task_id,
        [*judges, *(f"classify:{c}" for c in sorted(classified))],
        [*(latest[j].judge_version for j in judges), *(classified[c].classifier_version for c in sorted(classified))],
        stale=stale,
    )
    values: dict[tuple[str, str], dict[str, Cell]] = {}
    for judge in judges:
        j = latest[judge]
        for name, value in j.metrics.items():
            values.setdefault(("metric", name), {})[judge] = Cell(value, 1.0, j.evidence.get(name))
        for name, value in j.points.items():
            error = name.startswith(ERROR_POINT)
            row = ("error label", name.removeprefix(ERROR_POINT)) if error else ("point", name)
            values.setdefault(row, {})[judge] = Cell(value, j.max_points.get(name, 1.0), j.evidence.get(name))
    for cid in sorted(classified):
        found = {x.label: x for x in classified[cid].labels}
        for label in ALL_LABELS:
            x = found.get(label)
            evidence = Evidence(event_ids=x.evidence.event_ids, text=x.evidence.text, note=x.explanation) if x else None
            values.setdefault(("error label", label), {})[f"classify:{cid}"] = Cell(float(x is not None), 1.0, evidence)
    order = {kind: n for n, kind in enumerate(KINDS)}
    for kind, name in sorted(values, key=lambda key: (order[key[0]], key[1])):
        cells = values[(kind, name)]
        page.rows.append(Row(kind, name, [cells.get(r) for r in page.raters]))
    return page
