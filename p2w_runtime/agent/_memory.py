"""The personalization module: a planner's question -> retrieval -> generator answer, all recorded."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from p2w_rt.schemas import Rationale
from p2w_runtime.agent._replies import parse_generator
from p2w_runtime.agent.prompts import generator_messages
from p2w_runtime.domain import EpisodeWriter
from p2w_runtime.llm import LlmClient
from p2w_runtime.retrieval import HistoryRetriever, retrieval_events


@dataclass(frozen=True, slots=True)
class MemoryAnswer:
    query: str
    answer: str
    cited: list[int]
    hits: int


class Personalization:
    """Answers questions about one persona from their history, recording query, hits and rationale."""

    def __init__(
        self, retriever: HistoryRetriever, persona: str, llm: LlmClient, log: EpisodeWriter, k: int, threshold: float
    ) -> None:
        self.retriever = retriever
        self.persona = persona
        self.llm = llm
        self.log = log
        self.k = k
        self.threshold = threshold

    async def ask(
        self, query: str, *, step: int | None, phase: Literal["pre-execution", "on-demand"], reason: str | None
    ) -> MemoryAnswer:
        index = await asyncio.to_thread(self.retriever.index, self.persona)
        hits = await asyncio.to_thread(index.search, query, self.k, self.threshold)
        _, retrieved = retrieval_events(self.log, query, hits, index, self.k, self.threshold, step, phase, reason)
        reply = await self.llm.complete("generator", generator_messages(query, hits), step=step)
        parsed = parse_generator(reply.text, {h.entry_id for h in hits})
        self.log.add(
            Rationale(step=step, source="generator", text=parsed.answer, cited_entry_ids=parsed.cited),
            causation_id=retrieved.event_id,
        )
        return MemoryAnswer(query, parsed.answer, parsed.cited, len(hits))
