"""AgenticShop's tables from current judgments: score by query variant and intent type, per checklist
dimension, hit ratio, attribution error shares, and the score recomputed on valid attributions only.

As in the reference (``collect_results.py``), a user's figure is the mean over their judged products and a
table cell is the mean over users; a dimension's share is pooled over a user's products first. A user who curated
no product has no figure there (the reference makes no result folder for them), so ``no_products`` counts them in a
cell's ``users``. The hit ratio exists only for users whose profile names a target brand and type, so ``hit_users``
says how many users a cell's hit ratio is over and the ``hit_ratio`` table names them, with what the others lack.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import mean

from p2w_rt.replay.agenticshop._ids import ATTRIBUTION, CHECKLIST, HIT, NO_PRODUCTS, SHOP_JUDGE_IDS
from p2w_rt.replay.derived import Cell, MetricsTables, Table, latest_current, register_tables, run_heads
from p2w_rt.replay.judges import ScoresRecord, read_scores
from p2w_rt.schemas import DIMENSIONS, EpisodeStarted
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore

MEANS = ("score", "score_valid", "hit_ratio", "valid", "invalid", "irrelevant")
TITLES = {
    "by_variant": "AgenticShop: score by query variant and intent type (mean over users; no_products: users who "
    "curated none, left out of the means as in the reference; valid/invalid/irrelevant: attribution shares)",
    "per_dimension": "AgenticShop: checklist items satisfied per dimension",
    "hit_ratio": "AgenticShop: hit ratio per user (by_variant's hit_ratio is the mean over the hit_users that have "
    "one; not_computed: what the profile lacks, or that the user curated no products)",
}


@dataclass(slots=True)
class UserRow:
    task_id: str
    intent: str
    figures: dict[str, float] = field(default_factory=dict)
    hit_missing: str = ""
    """Why ``hit-ratio`` failed for this user (its error), when it did and has no figure."""
    no_products: bool = False
    """The user's curation linked no product (``NO_PRODUCTS``): no figure in any mean."""

    @property
    def variant(self) -> str:
        return self.task_id.split("-", 1)[0]


async def _intent(store: EventStore, stream: str) -> str:
    async for event in store.read_stream(stream):
        payload = event.decode().payload
        return payload.query_set if isinstance(payload, EpisodeStarted) else "?"
    return "?"


def _failures(records: list[ScoresRecord], heads: dict[str, str]) -> dict[tuple[str, str], tuple[str, str]]:
    """(episode stream, judge) -> (task id, error) where the judge's latest judgment of the episode as it is now
    failed."""
    failed: dict[tuple[str, str], tuple[str, str]] = {}
    for record in records:
        j = record.judgment
        if j.judge_id not in SHOP_JUDGE_IDS or heads.get(j.episode_stream) != j.trajectory_hash:
            continue
        if j.status == "failed":
            failed[(j.episode_stream, j.judge_id)] = (j.task_id, j.error or "failed")
        else:
            failed.pop((j.episode_stream, j.judge_id), None)
    return failed


async def collect_users(store: EventStore, runs: Sequence[RunInfo]) -> list[UserRow]:
    """One row per judged episode (user) with the figures of the AgenticShop judges that judged it."""
    rows: dict[str, UserRow] = {}
    for info in runs:
        records = await read_scores(store, info.run_id)  # read once: a run of other judges is passed over
        if not any(r.judgment.judge_id in (CHECKLIST, ATTRIBUTION, HIT) for r in records):
            continue
        heads = await run_heads(store, info.run_id)
        for (stream, judge_id), (task_id, error) in _failures(records, heads).items():
            if judge_id != HIT and error != NO_PRODUCTS:
                continue
            if stream not in rows:
                rows[stream] = UserRow(task_id, await _intent(store, stream))
            if judge_id == HIT:
                rows[stream].hit_missing = error
            rows[stream].no_products |= error == NO_PRODUCTS
        for (stream, judge_id), record in latest_current(records, heads).items():
            if judge_id not in (CHECKLIST, ATTRIBUTION, HIT):
                continue
            j = record.judgment
            if stream not in rows:
                rows[stream] = UserRow(j.task_id, await _intent(store, stream))
            m, figures = j.metrics, rows[stream].figures
            if judge_id == CHECKLIST:
                figures.update({k: v for k, v in m.items() if k == "score" or k.startswith("dim.")})
                if "score_valid" in m:
                    figures["score_valid"] = m["score_valid"]
            elif judge_id == HIT:
                figures["hit_ratio"] = m["hit_ratio"]
                rows[stream].hit_missing = ""
            figures.update({k: m[k] for k in ("valid", "invalid", "irrelevant") if k in m})
    return list(rows.values())


def _means(rows: list[UserRow], keys: Sequence[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in keys:
        values = [r.figures[key] for r in rows if key in r.figures]
        out[key] = mean(values) if values else None
    return out


def _hit_users(rows: list[UserRow]) -> list[dict[str, Cell]]:
    """Every user the hit-ratio judge saw: the figure, or what the profile lacks for one."""
    return [
        {"user": r.task_id, "intent": r.intent, "hit_ratio": r.figures.get("hit_ratio"), "not_computed": r.hit_missing}
        for r in sorted(rows, key=lambda r: r.task_id)
        if "hit_ratio" in r.figures or r.hit_missing
    ]


def tables(rows: list[UserRow]) -> dict[str, list[dict[str, Cell]]]:
    """The reference's tables as plain rows: by variant and intent type, per checklist dimension; and which
    users the hit ratio is over."""
    groups: dict[tuple[str, str], list[UserRow]] = defaultdict(list)
    for r in rows:
        groups[(r.variant, r.intent)].append(r)
    by_variant: list[dict[str, Cell]] = []
    for (variant, intent), members in [*sorted(groups.items()), (("all", "all"), rows)]:
        row: dict[str, Cell] = {"variant": variant, "intent": intent, "users": len(members)}
        row["no_products"] = sum(r.no_products for r in members)
        for key, value in _means(members, MEANS).items():
            row[key] = value
            if key == "hit_ratio":
                row["hit_users"] = sum(key in r.figures for r in members)
        by_variant.append(row)
    dims = _means(rows, [f"dim.{d}" for d in DIMENSIONS])
    per_dimension: list[dict[str, Cell]] = [
        {"dimension": d, "satisfied": dims[f"dim.{d}"]} for d in DIMENSIONS if dims[f"dim.{d}"] is not None
    ]
    return {"by_variant": by_variant, "per_dimension": per_dimension, "hit_ratio": _hit_users(rows)}


def _table(name: str, items: list[dict[str, Cell]]) -> Table:
    columns = tuple(items[0]) if items else ()
    return Table(name, TITLES[name], columns, tuple(tuple(item[c] for c in columns) for item in items))


async def shop_tables(store: EventStore, runs: Sequence[RunInfo], judge: str | None = None) -> list[Table]:
    """The AgenticShop tables of ``runs`` (all of them, whichever of its judges ``judge`` names); none when the
    runs hold no AgenticShop judgments."""
    rows = await collect_users(store, runs)
    return [_table(name, items) for name, items in tables(rows).items()] if rows else []


TABLES = register_tables(MetricsTables("agenticshop", SHOP_JUDGE_IDS, shop_tables))
"""AgenticShop's contribution to ``metrics`` (the plugin list's ``metrics`` entry): loads no judge."""
