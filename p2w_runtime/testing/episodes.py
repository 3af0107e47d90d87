"""Episodes built by hand, as the recorder would write them: for tests, benchmarks and examples (a testing kit,
not a writer of recorded runs: ``p2w-rt`` never calls it).

Each method appends one event with the right causation links (retrieval -> query,
memory answer -> retrieval) and returns its event id, so a test can assert which event a
judgment cites.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.schemas import (
    GENESIS_HASH,
    Action,
    AnyPayload,
    EpisodeFinished,
    FinalState,
    ForkPoint,
    GroundTruth,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    MemoryEntry,
    NewEvent,
    Observation,
    ParsedAction,
    Rationale,
    RetrievalHit,
    RunFinished,
    Scheme,
    StoredEvent,
)
from p2w_runtime.domain import EpisodeWriter, Provenance, RunSpec, episode_started
from p2w_runtime.domain import run_started as started_event
from p2w_runtime.domain.trajectory import Trajectory, project


def run_started(
    run_id: str,
    label: str,
    *,
    agent: str = "p2w-rt",
    model: str = "test-model",
    scheme: Scheme | None = "on-demand",
    dataset: str = "synthetic",
) -> NewEvent:
    spec = RunSpec(label=label, agent=agent, model=model, scheme=scheme, provenance=Provenance.synthetic(dataset))
    return started_event(run_id, spec)


def run_finished(run_id: str, episodes: int) -> NewEvent:
    return NewEvent(stream=run_id, payload=RunFinished(status="completed", episodes=episodes))


@dataclass(frozen=True, slots=True)
class SketchTask:
    """A task without a task file: persona and query set follow from the id (``Ann_Lee_A3``)."""

    task_id: str
    intent: str
    start_url: str
    level: int | None
    ground_truth: GroundTruth | None

    @property
    def persona(self) -> str:
        return self.task_id.rsplit("_", 1)[0]

    @property
    def query_set(self) -> str:
        return self.task_id[:-1]


class EpisodeBuilder:
    """One episode through an ``EpisodeWriter``: the grammar refuses what the recorder could not have written."""

    def __init__(
        self,
        run_id: str,
        task_id: str,
        *,
        query: str = "",
        ground_truth: GroundTruth | None = None,
        level: int | None = 0,
        scheme: Scheme | None = "on-demand",
        start_url: str = "https://www.bing.com/",
        episode_id: str | None = None,
        fork: ForkPoint | None = None,
    ) -> None:
        self.writer = EpisodeWriter.of(run_id, episode_id or task_id)
        self.stream = self.writer.stream
        task = SketchTask(task_id, query, start_url, level, ground_truth)
        started = episode_started(task, episode_id=episode_id or task_id, scheme=scheme, fork=fork)
        self.writer.add(started, fork.source_event_id if fork else None)

    @property
    def events(self) -> list[NewEvent]:
        """Every event built so far, in order (the builder never flushes)."""
        return self.writer.events

    @property
    def blobs(self) -> dict[str, bytes]:
        return self.writer.blobs

    def _add(self, payload: AnyPayload, causation_id: str | None = None) -> str:
        return self.writer.add(payload, causation_id).event_id

    def observation(
        self, step: int, url: str, title: str = "", description: str | None = None, ax_tree: bytes | None = None
    ) -> str:
        tree = self.writer.blob(ax_tree) if ax_tree is not None else None
        return self._add(Observation(step=step, url=url, title=title, description=description, ax_tree=tree))

    def history_query(self, query: str, *, step: int | None = None, phase: str = "on-demand", reason: str = "") -> str:
        return self._add(HistoryQuery(step=step, phase=phase, query=query, reason=reason or None))

    def retrieval(
        self,
        query_id: str | None,
        query: str,
        entries: Sequence[MemoryEntry],
        *,
        step: int | None = None,
        first_id: int = 0,
    ) -> str:
        hits = [
            RetrievalHit(entry_id=first_id + i, rank=i + 1, score=round(0.9 - i * 0.01, 3), entry=entry)
            for i, entry in enumerate(entries)
        ]
        payload = HistoryRetrieval(
            step=step, query=query, model_id="all-MiniLM-L6-v2", index_hash="0" * 64, k=20, threshold=0.5, hits=hits
        )
        return self._add(payload, query_id)

    def memory_answer(self, cause_id: str | None, text: str, *, step: int | None = None) -> str:
        return self._add(Rationale(step=step, source="generator", text=text), cause_id)

    def llm_call(self, call: LlmCall) -> str:
        return self._add(call)

    def planner(self, step: int, text: str) -> str:
        return self._add(Rationale(step=step, source="planner", text=text))

    def action(self, step: int, name: str, *args: str, status: str = "executed", error: str | None = None) -> str:
        parsed = ParsedAction(name=name, args=list(args))
        return self._add(Action(step=step, raw=parsed.render(), parsed=parsed, status=status, error=error))

    def final_state(
        self, url: str, dom_html: str | bytes | None = None, title: str = "", stylesheets: dict[str, str] | None = None
    ) -> str:
        page = dom_html.encode() if isinstance(dom_html, str) else dom_html
        return self._add(
            FinalState(
                url=url,
                title=title,
                dom_html=self.writer.blob(page) if page is not None else None,
                stylesheets=self.writer.blob(json.dumps(stylesheets).encode()) if stylesheets else None,
            )
        )

    def finish(
        self,
        end_reason: str,
        answer: str | None = None,
        *,
        final_url: str | None = None,
        steps: int = 0,
        detail: str | None = None,
        cost_usd: float | None = None,
    ) -> str:
        ended = EpisodeFinished(
            end_reason=end_reason, answer=answer, final_url=final_url, steps=steps, detail=detail, cost_usd=cost_usd
        )
        return self._add(ended)

    def sealed(self) -> list[StoredEvent]:
        """The events as a store would hold them (sequenced and hash-chained), without a store."""
        sealed, prev = [], GENESIS_HASH
        for seq, event in enumerate(self.events, 1):
            stored = StoredEvent.seal(event, seq=seq, prev_hash=prev)
            prev = stored.hash
            sealed.append(stored)
        return sealed

    def trajectory(self) -> Trajectory:
        """The projection of the episode so far."""
        return project(e.decode() for e in self.sealed())
