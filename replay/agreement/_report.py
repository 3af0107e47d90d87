"""What ``p2w-rt agree`` computes: pairwise agreement per item, changed verdicts, group α, self-consistency."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from p2w_rt.replay.agreement._raters import Rater
from p2w_rt.replay.agreement._stats import BOOTSTRAP_SAMPLES, Estimate, PairAgreement, group_alpha, pair_agreement

VERDICT = "metric:success"


def _item_order(item: str) -> tuple[int, str]:
    kind = item.partition(":")[0]
    return ({"metric": 0, "dimension": 1, "point": 2}.get(kind, 3), item)


@dataclass(frozen=True, slots=True)
class ItemAgreement:
    item: str
    stats: PairAgreement
    changed: int
    """Episodes where the two raters' values differ (for drift: how many moved)."""


@dataclass(slots=True)
class PairReport:
    a: str
    b: str
    episodes: int
    items: list[ItemAgreement] = field(default_factory=list)
    changed_verdicts: list[tuple[str, float, float]] = field(default_factory=list)
    """(task id, success by a, success by b) for every shared episode whose verdict differs."""


@dataclass(frozen=True, slots=True)
class GroupAlpha:
    """Krippendorff's α among several raters (the human annotators) on one item."""

    raters: tuple[str, ...]
    item: str
    units: int
    alpha: Estimate


@dataclass(frozen=True, slots=True)
class SelfConsistency:
    """One rater judged several times per episode (``replay --samples N``)."""

    rater: str
    episodes: int
    samples: int
    flipped: list[str]
    """Task ids whose success verdict is not the same in every sample."""
    alpha: dict[str, Estimate]

    @property
    def flip_share(self) -> float:
        return len(self.flipped) / self.episodes if self.episodes else math.nan


@dataclass(slots=True)
class AgreementReport:
    run: str
    pairs: list[PairReport] = field(default_factory=list)
    groups: list[GroupAlpha] = field(default_factory=list)
    self_consistency: list[SelfConsistency] = field(default_factory=list)


def compare(a: Rater, b: Rater, *, samples: int = BOOTSTRAP_SAMPLES) -> PairReport:
    """Agreement of two raters on every item both gave on at least one shared episode."""
    shared = [s for s in a.values if s in b.values]
    report = PairReport(a.name, b.name, len(shared))
    names = sorted({i for s in shared for i in a.values[s] if i in b.values[s]}, key=_item_order)
    for item in names:
        units = [s for s in shared if item in a.values[s] and item in b.values[s]]
        xs = [a.values[s][item] for s in units]
        ys = [b.values[s][item] for s in units]
        changed = sum(x != y for x, y in zip(xs, ys, strict=True))
        report.items.append(ItemAgreement(item, pair_agreement(xs, ys, samples=samples), changed))
    for s in shared:
        x, y = a.values[s].get(VERDICT), b.values[s].get(VERDICT)
        if x is not None and y is not None and x != y:
            report.changed_verdicts.append((a.tasks[s], x, y))
    return report


def group(raters: list[Rater], *, samples: int = BOOTSTRAP_SAMPLES) -> list[GroupAlpha]:
    """α among all ``raters`` per item, on the episodes at least two of them rated (missing values allowed)."""
    streams = sorted({s for r in raters for s in r.values})
    names = sorted({i for r in raters for v in r.values.values() for i in v}, key=_item_order)
    out = []
    for item in names:
        rows = [[r.values.get(s, {}).get(item) for s in streams] for r in raters]
        keep = [i for i in range(len(streams)) if sum(row[i] is not None for row in rows) >= 2]
        if not keep:
            continue
        rows = [[row[i] for i in keep] for row in rows]
        out.append(GroupAlpha(tuple(r.name for r in raters), item, len(keep), group_alpha(rows, samples=samples)))
    return out


def self_consistency(r: Rater, *, samples: int = BOOTSTRAP_SAMPLES) -> SelfConsistency | None:
    """Self-agreement across a rater's samples, or None when no episode was judged more than once."""
    multi = {s: v for s, v in r.samples.items() if len(v) >= 2}
    if not multi:
        return None
    streams = sorted(multi)
    depth = max(len(v) for v in multi.values())
    flipped = [r.tasks[s] for s in streams if len({x.get(VERDICT) for x in multi[s]} - {None}) > 1]
    names = sorted({i for v in multi.values() for x in v for i in x}, key=_item_order)
    alphas = {}
    for item in names:
        rows = [[multi[s][k].get(item) if k < len(multi[s]) else None for s in streams] for k in range(depth)]
        alphas[item] = group_alpha(rows, samples=samples)
    return SelfConsistency(r.name, len(streams), depth, flipped, alphas)


def agreement(run: str, raters: list[Rater], *, samples: int = BOOTSTRAP_SAMPLES) -> AgreementReport:
    """Every pair of raters compared; α among the humans when several labelled; self-consistency per rater."""
    report = AgreementReport(run)
    for a, b in itertools.combinations(raters, 2):
        pair = compare(a, b, samples=samples)
        if pair.items or not (a.is_classifier or b.is_classifier):  # a classifier shares only error labels
            report.pairs.append(pair)
    humans = [r for r in raters if r.is_human]
    if len(humans) >= 3:  # with two, the pair above already is their agreement
        report.groups = group(humans, samples=samples)
    for r in raters:
        sc = self_consistency(r, samples=samples)
        if sc is not None:
            report.self_consistency.append(sc)
    return report
