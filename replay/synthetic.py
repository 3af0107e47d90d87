"""Episodes built by hand, as the recorder would write them: for tests, benchmarks and examples.

Each method appends one event with the right causation links (retrieval -> query,
memory answer -> retrieval) and returns its event id, so a test can assert which event a
judgment cites.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from replay.trajectory import Trajectory, project
from schemas import (
    GENESIS_HASH,
    Action,
    EpisodeFinished,
    EpisodeStarted,
    FinalState,
    GroundTruth,
    HistoryQuery,
    HistoryRetrieval,
    MemoryEntry,
    NewEvent,
    Observation,
    ParsedAction,
    Rationale,
    RetrievalHit,
    RunFinished,
    RunStarted,
    StoredEvent,
    blob_hash,
)


def run_started(
    run_id: str,
    label: str,
    *,
    agent: str = "p2w-rt",
    model: str = "test-model",
    scheme: str | None = "on-demand",
) -> NewEvent:
    return NewEvent(
        stream=run_id,
        payload=RunStarted(
            run_id=run_id,
            label=label,
            agent=agent,
            backbone_model=model,
            scheme=scheme,
            dataset_id="synthetic",
            dataset_hash="0" * 64,
            code_version="synthetic",
        ),
    )


def run_finished(run_id: str, episodes: int) -> NewEvent:
    return NewEvent(stream=run_id, payload=RunFinished(status="completed", episodes=episodes))


class EpisodeBuilder:
    def __init__(
        self,
        run_id: str,
        task_id: str,
        *,
        query: str = "",
        ground_truth: GroundTruth | None = None,
        level: int | None = 0,
        scheme: str | None = "on-demand",
        start_url: str = "https://www.bing.com/",
        episode_id: str | None = None,
    ) -> None:
        self.stream = f"{run_id}/{episode_id or task_id}"
        self.events: list[NewEvent] = []
        self.blobs: dict[str, bytes] = {}
        self._add(
            EpisodeStarted(
                episode_id=episode_id or task_id,
                task_id=task_id,
                persona=task_id.rsplit("_", 1)[0],
                query_set=task_id[:-1],
                level=level,
                scheme=scheme,
                query=query,
                start_url=start_url,
                ground_truth=ground_truth,
            )
        )

    def _add(self, payload: object, causation_id: str | None = None) -> str:
        event = NewEvent(stream=self.stream, payload=payload, causation_id=causation_id)
        self.events.append(event)
        return event.event_id

    def observation(self, step: int, url: str, title: str = "", description: str | None = None) -> str:
        return self._add(Observation(step=step, url=url, title=title, description=description))

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

    def planner(self, step: int, text: str) -> str:
        return self._add(Rationale(step=step, source="planner", text=text))

    def action(self, step: int, name: str, *args: str, status: str = "executed", error: str | None = None) -> str:
        parsed = ParsedAction(name=name, args=list(args))
        return self._add(Action(step=step, raw=parsed.render(), parsed=parsed, status=status, error=error))

    def final_state(
        self, url: str, dom_html: str | None = None, title: str = "", stylesheets: dict[str, str] | None = None
    ) -> str:
        return self._add(
            FinalState(
                url=url,
                title=title,
                dom_html=self._blob(dom_html.encode()) if dom_html is not None else None,
                stylesheets=self._blob(json.dumps(stylesheets).encode()) if stylesheets else None,
            )
        )

    def _blob(self, data: bytes) -> str:
        sha = blob_hash(data)
        self.blobs[sha] = data
        return sha

    def finish(
        self,
        end_reason: str,
        answer: str | None = None,
        *,
        final_url: str | None = None,
        steps: int = 0,
        detail: str | None = None,
    ) -> str:
        payload = EpisodeFinished(
            end_reason=end_reason,
            answer=answer,
            final_url=final_url,
            steps=steps,
            detail=detail,
        )
        return self._add(payload)

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
