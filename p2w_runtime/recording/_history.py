"""The history side of a recorded episode: the queries the agent asks of the persona's history, what they retrieved
(by the agent's own retriever, or p2w-rt's), and the answers the agent drew from them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Literal

from p2w_rt.schemas import ForkPoint, HistoryQuery, HistoryRetrieval, Rationale, RetrievalHit
from p2w_runtime.domain import EpisodeWriter, TaskLike
from p2w_runtime.errors import UserError
from p2w_runtime.recording._observer import StepObserver
from p2w_runtime.recording._replay import ReplayLink
from p2w_runtime.retrieval import DEFAULT_K, DEFAULT_THRESHOLD, HistoryRetriever, SearchHit, retrieval_events

Phase = Literal["pre-execution", "on-demand"]


class EpisodeHistory:
    """A base of ``EpisodeRecorder``, which sets these attributes: its history records, each staged after the
    observation being read."""

    writer: EpisodeWriter
    stream: str
    task: TaskLike
    replay: ReplayLink | None
    fork: ForkPoint | None
    step: int
    _observer: StepObserver
    _retrieval: str | None
    """The event id of the latest retrieval, which a memory answer is caused by."""

    async def _observed(self) -> None:
        """Wait for the page read of the latest ``observe`` (its observation and the calls it held are staged)."""
        await self._observer.done()

    async def history(
        self,
        query: str,
        hits: Sequence[RetrievalHit],
        *,
        model_id: str,
        index_hash: str,
        k: int,
        threshold: float,
        phase: Phase = "on-demand",
        reason: str | None = None,
    ) -> None:
        """A history query and what the agent's own retriever returned for it."""
        await self._observed()
        asked = self.writer.add(HistoryQuery(step=self._at(), phase=phase, query=query, reason=reason))
        retrieval = HistoryRetrieval(
            step=self._at(),
            query=query,
            model_id=model_id,
            index_hash=index_hash,
            k=k,
            threshold=threshold,
            hits=list(hits),
        )
        self._retrieval = self.writer.add(retrieval, asked.event_id).event_id

    async def retrieve(
        self,
        retriever: HistoryRetriever | Callable[[], HistoryRetriever],
        query: str,
        *,
        persona: str | None = None,
        k: int = DEFAULT_K,
        threshold: float = DEFAULT_THRESHOLD,
        phase: Phase = "on-demand",
        reason: str | None = None,
    ) -> list[SearchHit]:
        """Ask p2w-rt's retriever about the task's persona (or ``persona``) and record the query and its hits;
        ``retriever`` may be a function making it, called only when a search is made: a re-execution by p2w-rt makes
        none, the recorded hits answer (``ReplayDiverged`` when the query is not the recorded one)."""
        if self.replay is not None and (self.fork is None or self.step < self.fork.at_step):
            recorded, found = await self.replay.retrieval(query)
            await self.history(query, recorded, phase=phase, reason=reason, **found)
            return [SearchHit(hit.entry_id, hit.rank, hit.score or 0.0, hit.entry) for hit in recorded]
        if not isinstance(retriever, HistoryRetriever):
            retriever = await asyncio.to_thread(retriever)
        index = await asyncio.to_thread(retriever.index, persona or self.task.persona)
        hits = await asyncio.to_thread(index.search, query, k, threshold)
        await self._observed()
        _, answered = retrieval_events(self.writer, query, hits, index, k, threshold, self._at(), phase, reason)
        self._retrieval = answered.event_id
        return hits

    async def memory_answer(self, text: str, cited: Sequence[int] = ()) -> None:
        """The answer the agent drew from the latest retrieval (its generator's), caused by that retrieval."""
        await self._observed()
        if self._retrieval is None:
            raise UserError(f"episode {self.stream}: a memory answer needs a history retrieval before it")
        rationale = Rationale(step=self._at(), source="generator", text=text, cited_entry_ids=list(cited))
        self.writer.add(rationale, self._retrieval)

    def _at(self) -> int | None:
        return self.step or None
