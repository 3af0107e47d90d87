"""Error counts by agent / model / scheme over one or more classified runs (the paper's appendix I view)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from p2w_rt.replay.classify._labels import NAVIGATION_LABELS, PERSONALIZATION_LABELS
from p2w_rt.replay.classify._registry import ClassifySummary
from p2w_runtime.domain import RunInfo


@dataclass(slots=True)
class SummaryRow:
    agent: str
    model: str
    scheme: str
    run_label: str | None = None
    """Set when the row is one run (``per_run``): the column is named by it, even if runs share a configuration."""
    runs: list[str] = field(default_factory=list)
    episodes: int = 0
    unclassified: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def group(self) -> str:
        return f"{self.agent} / {self.model} / {self.scheme}"

    @property
    def name(self) -> str:
        """The run (per run) or the group and the runs in it, for legends."""
        if self.run_label is not None:
            return f"{self.run_label} ({self.group})"
        runs = ", ".join(self.runs) if len(self.runs) <= 3 else f"{len(self.runs)} runs"
        return f"{self.group} ({runs})"


@dataclass(frozen=True, slots=True)
class ErrorSummary:
    classifier_id: str
    labels: tuple[str, ...]
    """Columns: the four personalization types always, then the navigation labels that occur."""
    rows: tuple[SummaryRow, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "classifier": self.classifier_id,
            "labels": list(self.labels),
            "groups": [
                {
                    "agent": r.agent,
                    "model": r.model,
                    "scheme": r.scheme,
                    **({} if r.run_label is None else {"run": r.run_label}),
                    "runs": r.runs,
                    "episodes": r.episodes,
                    "unclassified": r.unclassified,
                    "counts": {label: r.counts.get(label, 0) for label in self.labels},
                }
                for r in self.rows
            ],
        }


def summarize(runs: Sequence[tuple[RunInfo, ClassifySummary]], *, per_run: bool = False) -> ErrorSummary:
    """Episodes showing each label, per (agent, model, scheme), or per run with ``per_run`` (runs of one
    configuration compared); a failed classification counts as unclassified."""
    rows: dict[tuple[str, ...], SummaryRow] = {}
    classifier_ids = {summary.classifier_id for _, summary in runs}
    for info, summary in runs:
        config = (info.started.agent, info.started.backbone_model, info.started.scheme or "-")
        key = (*config, info.run_id) if per_run else config
        row = rows.setdefault(key, SummaryRow(*config, run_label=info.label if per_run else None))
        row.runs.append(info.label)
        for outcome in summary.outcomes:
            row.episodes += 1
            if outcome.classification.status != "ok":
                row.unclassified += 1
                continue
            row.counts.update({label.label for label in outcome.classification.labels})
    seen = {label for row in rows.values() for label in row.counts}
    labels = PERSONALIZATION_LABELS + tuple(label for label in NAVIGATION_LABELS if label in seen)
    return ErrorSummary(", ".join(sorted(classifier_ids)), labels, tuple(rows.values()))
