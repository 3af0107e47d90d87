"""A run's counted episodes as OTLP traces: each trajectory with its current judgments and error labels."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from p2w_rt.replay.classify import ClassificationRecord, current_classifications
from p2w_rt.replay.judges import JudgmentRecord, current_judgments
from p2w_rt.replay.otel._trace import episode_trace
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.store import EventStore


async def otel_traces(store: EventStore, run: RunInfo, *, content: bool = True) -> AsyncIterator[dict[str, Any]]:
    """One OTLP ``TracesData`` per counted episode of ``run``, in start order, with its current judgments and
    error labels. ``content=False`` leaves prompts, responses and retrieved entries out (``gen_ai.input.messages``,
    ``gen_ai.output.messages``, ``p2w.retrieval.entries``: most of a run's bytes, and the persona's history)."""
    judgments: dict[str, list[JudgmentRecord]] = {}
    for (stream, _), record in sorted((await current_judgments(store, run.run_id)).items()):
        judgments.setdefault(stream, []).append(record)
    labels: dict[str, list[ClassificationRecord]] = {}
    for (stream, _), c_record in sorted((await current_classifications(store, run.run_id)).items()):
        labels.setdefault(stream, []).append(c_record)
    for ref in await episodes_of(store, run.run_id):
        t = await load_trajectory(store, ref.stream, detailed=True)
        yield episode_trace(t, run, judgments.get(ref.stream, []), labels.get(ref.stream, []), content=content)
