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
from p2w_rt.replay.derived import Cell, MetricsTables, Table, current_of, register_tables, run_heads
from p2w_rt.replay.judges import read_scores
from p2w_rt.replay.metrics import Versions, failed_now, judge_label, newest_by_judge, versions_of
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


@dataclass(slots=True)
class Judged:
    """The users' rows, each judge's version they are scored with, and per judge how many users it judged only at
    other versions (left out of its figures)."""

    rows: list[UserRow]
    versions: dict[str, str]
    left_out: dict[str, int]


async def _judged_now(store: EventStore, runs: Sequence[RunInfo]) -> list[tuple[Versions, Versions]]:
    """Per run holding AgenticShop judgments: its judgments of the episodes as they are now, successful and failed,
    each version of a judge apart."""
    out = []
    for info in runs:
        records = [r for r in await read_scores(store, info.run_id) if r.producer_id in SHOP_JUDGE_IDS]
        if any(r.producer_id in (CHECKLIST, ATTRIBUTION, HIT) for r in records):
            heads = await run_heads(store, info.run_id)
            out.append((versions_of(current_of(records, heads)), versions_of(failed_now(records, heads))))
    return out


async def collect_users(store: EventStore, runs: Sequence[RunInfo]) -> Judged:
    """One row per judged episode (user) with the figures of the AgenticShop judges that judged it, each judge at
    one version: the newest among the runs' judgments (``replay.metrics.newest_by_judge``), failed ones included,
    as a failure is shown too (no products, no hit ratio)."""
    judged = await _judged_now(store, runs)
    version_of = newest_by_judge(v for pair in judged for v in pair)
    rows: dict[str, UserRow] = {}
    left_out: dict[str, int] = {}

    async def row(stream: str, task_id: str) -> UserRow:
        if stream not in rows:
            rows[stream] = UserRow(task_id, await _intent(store, stream))
        return rows[stream]

    for ok, failed in judged:
        for stream, judge_id in sorted({*ok, *failed}):
            version = version_of[judge_id]
            record = ok.get((stream, judge_id), {}).get(version)
            failure = failed.get((stream, judge_id), {}).get(version)
            if record is None and failure is None:
                left_out[judge_id] = left_out.get(judge_id, 0) + 1
            elif record is not None and judge_id in (CHECKLIST, ATTRIBUTION, HIT):
                _add_figures(await row(stream, record.judgment.task_id), judge_id, record.judgment.metrics)
            elif record is None and failure is not None and (judge_id == HIT or failure.payload.error == NO_PRODUCTS):
                user = await row(stream, failure.payload.task_id)
                error = failure.payload.error or "failed"
                if judge_id == HIT:
                    user.hit_missing = error
                user.no_products |= error == NO_PRODUCTS
    return Judged(list(rows.values()), version_of, left_out)


def _add_figures(user: UserRow, judge_id: str, m: dict[str, float]) -> None:
    figures = user.figures
    if judge_id == CHECKLIST:
        figures.update({k: v for k, v in m.items() if k == "score" or k.startswith("dim.")})
        if "score_valid" in m:
            figures["score_valid"] = m["score_valid"]
    elif judge_id == HIT:
        figures["hit_ratio"] = m["hit_ratio"]
        user.hit_missing = ""
    figures.update({k: m[k] for k in ("valid", "invalid", "irrelevant") if k in m})


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


JUDGES = {"by_variant": (CHECKLIST, ATTRIBUTION, HIT), "per_dimension": (CHECKLIST,), "hit_ratio": (HIT,)}
"""The judges whose figures each table shows."""


def _scored_with(name: str, judged: Judged) -> str:
    """The judges of table ``name`` at the version it scores with (``agenticshop-checklist@4``), and how many users
    each judged only at another version, left out."""
    judges = [j for j in JUDGES[name] if j in judged.versions]
    named = ", ".join(judge_label(j, judged.versions[j]) for j in judges)
    left = [
        f"{n} user(s) judged by {j} only at another version left out" for j in judges if (n := judged.left_out.get(j))
    ]
    return "; ".join([f"scored with {named}", *left])


def _table(name: str, items: list[dict[str, Cell]], judged: Judged) -> Table:
    columns = tuple(items[0]) if items else ()
    title = f"{TITLES[name]} [{_scored_with(name, judged)}]"
    return Table(name, title, columns, tuple(tuple(item[c] for c in columns) for item in items))


async def shop_tables(store: EventStore, runs: Sequence[RunInfo], judge: str | None = None) -> list[Table]:
    """The AgenticShop tables of ``runs`` (all of them, whichever of its judges ``judge`` names); none when the
    runs hold no AgenticShop judgments."""
    judged = await collect_users(store, runs)
    return [_table(name, items, judged) for name, items in tables(judged.rows).items()] if judged.rows else []


TABLES = register_tables(MetricsTables("agenticshop", SHOP_JUDGE_IDS, shop_tables))
"""AgenticShop's contribution to ``metrics`` (the plugin list's ``metrics`` entry): loads no judge."""
