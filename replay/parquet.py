"""Runs as Parquet tables, for analysis outside p2w-rt (pandas, DuckDB, Spark): one file per table, one row
per episode, step, history query, LLM call and judgment of every run named. Schema: docs/design/parquet.md.

Episodes are the counted ones (``p2w_runtime.store.counted``), judgments and classifications the current ones
(of the episode as it is now), so the figures agree with ``p2w-rt metrics``; LLM calls are every call the run
paid for, with ``counted`` saying whether its episode counts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from p2w_rt.replay._folder_publish import published_folder
from p2w_rt.replay.classify import current_classifications
from p2w_rt.replay.exports import ExportRequest
from p2w_rt.replay.judges import current_judgments
from p2w_rt.schemas import LlmCall
from p2w_runtime.domain import RunInfo, under
from p2w_runtime.domain.trajectory import Trajectory, load_trajectories
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore

FIGURES = ("p_web", "p_pref", "p_avg", "intent", "success")
_RUN_COLUMNS = [("run_id", pa.string()), ("label", pa.string()), ("stream", pa.string()), ("task_id", pa.string())]
_HIT = pa.struct(
    [("entry_id", pa.int64()), ("rank", pa.int64()), ("score", pa.float64()), ("type", pa.string()),
     ("object", pa.string()), ("website", pa.string())]
)  # fmt: skip
_POINT = pa.struct([("key", pa.string()), ("points", pa.float64()), ("max_points", pa.float64())])

SCHEMAS: dict[str, pa.Schema] = {
    "episodes": pa.schema(
        [
            *_RUN_COLUMNS,
            ("agent", pa.string()),
            ("model", pa.string()),
            ("scheme", pa.string()),
            ("persona", pa.string()),
            ("level", pa.int64()),
            ("query", pa.string()),
            ("end_reason", pa.string()),
            ("answer", pa.string()),
            ("final_url", pa.string()),
            ("steps", pa.int64()),
            ("actions", pa.int64()),
            ("history_queries", pa.int64()),
            ("llm_calls", pa.int64()),
            ("llm_cost_usd", pa.float64()),
            ("judges", pa.list_(pa.string())),
            *((f, pa.map_(pa.string(), pa.float64())) for f in FIGURES),
            ("labels", pa.map_(pa.string(), pa.list_(pa.string()))),
        ]
    ),  # fmt: skip
    "steps": pa.schema(
        [
            *_RUN_COLUMNS,
            ("step", pa.int64()),
            ("event_id", pa.string()),
            ("action", pa.string()),
            ("raw", pa.string()),
            ("status", pa.string()),
            ("error", pa.string()),
            ("url", pa.string()),
        ]
    ),  # fmt: skip
    "history_queries": pa.schema(
        [
            *_RUN_COLUMNS,
            ("step", pa.int64()),
            ("event_id", pa.string()),
            ("phase", pa.string()),
            ("query", pa.string()),
            ("reason", pa.string()),
            ("hit_count", pa.int64()),
            ("hits", pa.list_(_HIT)),
        ]
    ),  # fmt: skip
    "llm_calls": pa.schema(
        [
            ("run_id", pa.string()),
            ("label", pa.string()),
            ("stream", pa.string()),
            ("counted", pa.bool_()),
            ("event_id", pa.string()),
            ("step", pa.int64()),
            ("role", pa.string()),
            ("model", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("total_tokens", pa.int64()),
            ("latency_s", pa.float64()),
            ("cost_usd", pa.float64()),
            ("attempt", pa.int64()),
            ("error", pa.string()),
        ]
    ),  # fmt: skip
    "judgments": pa.schema(
        [
            *_RUN_COLUMNS,
            ("event_id", pa.string()),
            ("judge_id", pa.string()),
            ("judge_version", pa.string()),
            ("config_hash", pa.string()),
            ("trajectory_hash", pa.string()),
            ("cost_usd", pa.float64()),
            *((f, pa.float64()) for f in FIGURES),
            ("metrics", pa.map_(pa.string(), pa.float64())),
            ("points", pa.list_(_POINT)),
        ]
    ),  # fmt: skip
}


@dataclass(frozen=True, slots=True)
class ParquetSummary:
    folder: Path
    runs: int
    rows: dict[str, int]


class ExportFolderError(UserError):
    """The output folder cannot take the tables."""


MANIFEST = "p2w-rt-export.json"
"""Written last, beside the tables: each table's file, rows and sha256, so a reader (or a copy of the folder) can
tell a complete export."""
FILES = frozenset({*(f"{name}.parquet" for name in SCHEMAS), MANIFEST})


async def export_parquet(store: EventStore, runs: Sequence[RunInfo], request: ExportRequest) -> ParquetSummary:
    """Write the five tables of ``runs`` into the folder ``request.output`` (an exporter: ``replay/exports.py``),
    published whole (``replay/_folder_publish.py``): a reader finds the earlier export or this one, never a mix."""
    folder = request.output
    if folder is None:
        raise ExportFolderError("Parquet tables are written to a folder: give one")
    with published_folder(folder, FILES, force=request.force, error=ExportFolderError) as stage:
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in SCHEMAS}
        for run in runs:
            await _run_rows(store, run, rows)
        _write_tables(stage, runs, rows)
    return ParquetSummary(folder, len(runs), {name: len(r) for name, r in rows.items()})


def _write_tables(stage: Path, runs: Sequence[RunInfo], rows: dict[str, list[dict[str, Any]]]) -> None:
    tables: dict[str, dict[str, Any]] = {}
    for name, schema in SCHEMAS.items():
        path = stage / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows[name], schema=schema), path)
        with path.open("rb") as written:
            tables[path.name] = {"rows": len(rows[name]), "sha256": hashlib.file_digest(written, "sha256").hexdigest()}
    manifest = {"p2w-rt": "export --format parquet", "manifest": 1,
                "runs": [{"run_id": r.run_id, "label": r.label} for r in runs], "tables": tables}  # fmt: skip
    (stage / MANIFEST).write_bytes(json.dumps(manifest, indent=2).encode() + b"\n")


async def _run_rows(store: EventStore, run: RunInfo, rows: dict[str, list[dict[str, Any]]]) -> None:
    judged = await current_judgments(store, run.run_id)
    labels = await _current_labels(store, run.run_id)
    counted: set[str] = set()
    async for t in load_trajectories(store, run.run_id):
        counted.add(t.stream)
        base = {"run_id": run.run_id, "label": run.label, "stream": t.stream, "task_id": t.task_id}
        mine = {judge: r for (stream, judge), r in judged.items() if stream == t.stream}
        rows["episodes"].append(_episode_row(base, run, t, mine, labels.get(t.stream, {})))
        rows["steps"].extend(_step_rows(base, t))
        rows["history_queries"].extend(_history_rows(base, t))
        for judge, record in sorted(mine.items()):
            j = record.judgment
            rows["judgments"].append(
                {**base, "event_id": record.event_id, "judge_id": judge, "judge_version": j.judge_version,
                 "config_hash": j.config_hash, "trajectory_hash": j.trajectory_hash, "cost_usd": j.cost_usd,
                 **{f: j.metrics.get(f) for f in FIGURES}, "metrics": dict(j.metrics),
                 "points": [{"key": k, "points": v, "max_points": j.max_points.get(k)} for k, v in j.points.items()]}
            )  # fmt: skip
    async for stored in store.read_all(stream_prefix=under(run.run_id), types=["llm.call"]):
        call = stored.decode().payload
        assert isinstance(call, LlmCall)
        usage = call.usage
        rows["llm_calls"].append(
            {"run_id": run.run_id, "label": run.label, "stream": stored.stream, "counted": stored.stream in counted,
             "event_id": stored.event_id, "step": call.step, "role": call.role, "model": call.model,
             "prompt_tokens": usage.prompt_tokens if usage else None,
             "completion_tokens": usage.completion_tokens if usage else None,
             "total_tokens": usage.total_tokens if usage else None, "latency_s": call.latency_s,
             "cost_usd": call.cost_usd, "attempt": call.attempt, "error": call.error}
        )  # fmt: skip


async def _current_labels(store: EventStore, run_id: str) -> dict[str, dict[str, list[str]]]:
    """Per episode stream, the current classification's labels by classifier."""
    labels: dict[str, dict[str, list[str]]] = {}
    for (stream, classifier), record in (await current_classifications(store, run_id)).items():
        labels.setdefault(stream, {})[classifier] = [label.label for label in record.classification.labels]
    return labels


def _episode_row(
    base: dict[str, Any], run: RunInfo, t: Trajectory, judged: dict[str, Any], labels: dict[str, list[str]]
) -> dict[str, Any]:
    metrics = {judge: record.judgment.metrics for judge, record in judged.items()}
    return {
        **base, "agent": run.started.agent, "model": run.started.backbone_model,
        "scheme": t.scheme or run.started.scheme, "persona": t.persona, "level": t.level, "query": t.query,
        "end_reason": t.end_reason, "answer": t.answer, "final_url": t.final_url, "steps": len(t.steps),
        "actions": len(t.actions), "history_queries": len(t.history), "llm_calls": t.llm_calls,
        "llm_cost_usd": t.llm_cost_usd, "judges": sorted(judged),
        **{f: {judge: m[f] for judge, m in metrics.items() if f in m} for f in FIGURES},
        "labels": labels,
    }  # fmt: skip


def _step_rows(base: dict[str, Any], t: Trajectory) -> list[dict[str, Any]]:
    url_at = {o.step: o.url for o in t.observations}
    return [
        {**base, "step": a.step, "event_id": a.event_id, "action": a.name, "raw": a.raw, "status": a.status,
         "error": a.error, "url": url_at.get(a.step)}
        for a in t.actions
    ]  # fmt: skip


def _history_rows(base: dict[str, Any], t: Trajectory) -> list[dict[str, Any]]:
    return [
        {**base, "step": h.step, "event_id": h.query_event_id, "phase": h.phase, "query": h.query,
         "reason": h.reason, "hit_count": len(h.hits),
         "hits": [{"entry_id": hit.entry_id, "rank": hit.rank, "score": hit.score, "type": hit.entry.type,
                   "object": hit.entry.object, "website": hit.entry.website} for hit in h.hits]}
        for h in t.history
    ]  # fmt: skip
