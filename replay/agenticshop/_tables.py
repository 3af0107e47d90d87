"""AgenticShop's tables from current judgments: score by query variant and intent type, per checklist
dimension, hit ratio, attribution error shares, and the score recomputed on valid attributions only.

As in the reference (``collect_results.py``), a user's figure is the mean over their judged products and a
table cell is the mean over users; a dimension's share is pooled over a user's products first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import mean

from p2w_runtime.store import EventStore, RunInfo
from replay.judging import current_judgments
from schemas import DIMENSIONS, EpisodeStarted

CHECKLIST, ATTRIBUTION, HIT = "agenticshop-checklist", "attribution", "hit-ratio"
COLUMNS = ("users", "score", "score_valid", "hit_ratio", "valid", "invalid", "irrelevant")


@dataclass(slots=True)
class UserRow:
    variant: str
    intent: str
    figures: dict[str, float] = field(default_factory=dict)


async def _intent(store: EventStore, stream: str) -> str:
    async for event in store.read_stream(stream):
        payload = event.decode().payload
        return payload.query_set if isinstance(payload, EpisodeStarted) else "?"
    return "?"


async def collect_users(store: EventStore, runs: Sequence[RunInfo]) -> list[UserRow]:
    """One row per judged episode (user) with the figures of the AgenticShop judges that judged it."""
    rows: dict[str, UserRow] = {}
    for info in runs:
        for (stream, judge_id), record in (await current_judgments(store, info.run_id)).items():
            if judge_id not in (CHECKLIST, ATTRIBUTION, HIT):
                continue
            j = record.judgment
            if stream not in rows:
                rows[stream] = UserRow(j.task_id.split("-", 1)[0], await _intent(store, stream))
            m, figures = j.metrics, rows[stream].figures
            if judge_id == CHECKLIST:
                figures.update({k: v for k, v in m.items() if k == "score" or k.startswith("dim.")})
                if "score_valid" in m:
                    figures["score_valid"] = m["score_valid"]
            elif judge_id == HIT:
                figures["hit_ratio"] = m["hit_ratio"]
            figures.update({k: m[k] for k in ("valid", "invalid", "irrelevant") if k in m})
    return list(rows.values())


def _means(rows: list[UserRow], keys: Sequence[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in keys:
        values = [r.figures[key] for r in rows if key in r.figures]
        out[key] = mean(values) if values else None
    return out


def tables(rows: list[UserRow]) -> dict[str, list[dict[str, object]]]:
    """The reference's tables as plain rows: by variant and intent type, and per checklist dimension."""
    groups: dict[tuple[str, str], list[UserRow]] = defaultdict(list)
    for r in rows:
        groups[(r.variant, r.intent)].append(r)
    by_variant: list[dict[str, object]] = []
    for (variant, intent), members in [*sorted(groups.items()), (("all", "all"), rows)]:
        by_variant.append({"variant": variant, "intent": intent, "users": len(members), **_means(members, COLUMNS[1:])})
    dims = _means(rows, [f"dim.{d}" for d in DIMENSIONS])
    per_dimension: list[dict[str, object]] = [
        {"dimension": d, "satisfied": dims[f"dim.{d}"]} for d in DIMENSIONS if dims[f"dim.{d}"] is not None
    ]
    return {"by_variant": by_variant, "per_dimension": per_dimension}


async def shop_tables(store: EventStore, runs: Sequence[RunInfo]) -> dict[str, list[dict[str, object]]] | None:
    """The AgenticShop tables of ``runs``; None when they hold no AgenticShop judgments."""
    rows = await collect_users(store, runs)
    return tables(rows) if rows else None
