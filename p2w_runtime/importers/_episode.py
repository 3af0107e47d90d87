"""Turn one imported trajectory into the events our own recorder writes for an episode.

Both format readers drive an ``ImportedEpisode``; it owns the event shapes and the resolution of
retrieved memory indices to entries of the persona's bank, so the two formats cannot drift apart.
Order and causation are checked by the ``EpisodeWriter`` underneath, as for every other writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from p2w_rt.schemas import (
    Action,
    EndReason,
    EpisodeFinished,
    HistoryQuery,
    HistoryRetrieval,
    MemoryEntry,
    Observation,
    ParsedAction,
    Rationale,
    RetrievalHit,
    Scheme,
)
from p2w_runtime.data import DataError, Task, find_memory_bank, load_memory_bank, memory_bank_hash
from p2w_runtime.domain import EpisodeWriter, episode_started
from p2w_runtime.errors import clip
from p2w_runtime.importers._errors import TrajectoryImportError

IMPORTED_RETRIEVER = "unknown (imported)"
"""The runners do not record the embedding model; retrievals say so instead of guessing."""
RUNNER_TOP_K = 20
RUNNER_THRESHOLD = 0.5
"""Persona2Web runners' retrieval defaults (top 20, cosine >= 0.5); the files do not record them."""


def _digits(text: str) -> int | str:
    """An index the runner wrote as a string (``"3"``), else ``text``: ASCII digits only, since ``"²"`` and ``"٣"``
    pass ``str.isdigit``; more than 18 digits name no entry of any bank (and ``int()`` refuses over 4300)."""
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else text


@dataclass(frozen=True, slots=True)
class Header:
    """What a file says about itself before its events are read."""

    task_id: str
    model: str | None
    model_is_tag: bool
    """``model`` is the squeezed tag of the file name, not the runner's model name."""
    field: str
    """Where the task id came from, for the error when it is unknown."""


@dataclass(frozen=True, slots=True)
class MemoryBank:
    entries: Sequence[MemoryEntry]
    hash: str


class MemoryBanks:
    """Persona memory banks, loaded on first use: no-history trajectories never need one."""

    def __init__(self, history_dir: Path) -> None:
        self.history_dir = Path(history_dir)
        self._loaded: dict[str, MemoryBank | DataError] = {}

    def get(self, persona: str) -> MemoryBank:
        if persona not in self._loaded:
            try:
                entries = load_memory_bank(find_memory_bank(self.history_dir, persona))
                self._loaded[persona] = MemoryBank(entries, memory_bank_hash(entries))
            except DataError as exc:
                self._loaded[persona] = exc
        found = self._loaded[persona]
        if isinstance(found, DataError):
            raise found
        return found


class ImportedEpisode:
    """Collects the events of one imported episode, in order, for a single ``store.append``."""

    def __init__(self, writer: EpisodeWriter, *, path: Path, persona: str, banks: MemoryBanks) -> None:
        self.writer = writer
        self.path = path
        self.persona = persona
        self.banks = banks
        self.task_id = ""
        self.notes: list[str] = []
        """What the import summary says about this file: actions the file does not account for, steps not run."""

    def _bank(self, field: str) -> MemoryBank:
        try:
            return self.banks.get(self.persona)
        except DataError as exc:
            raise self.fail(field, f"cannot resolve memory indices: {exc}") from None

    def fail(self, field: str | None, message: str) -> TrajectoryImportError:
        return TrajectoryImportError(self.path, field, message)

    def started(self, task: Task, *, episode_id: str, scheme: Scheme | None, objective: str | None = None) -> None:
        self.task_id = task.task_id
        self.writer.add(
            episode_started(task, episode_id=episode_id, scheme=scheme, source_file=self.path, objective=objective)
        )

    def note(self, text: str) -> None:
        self.notes.append(text)

    def _hits(self, indices: Any, field: str, bank: MemoryBank) -> list[RetrievalHit]:
        if not isinstance(indices, list):
            raise self.fail(field, f"expected a list of memory indices, got {type(indices).__name__}")
        hits = []
        for rank, raw in enumerate(indices, start=1):
            index = _digits(raw) if isinstance(raw, str) else raw
            if not isinstance(index, int) or isinstance(index, bool):
                raise self.fail(f"{field}[{rank - 1}]", f"memory index {clip(repr(raw))} is not an integer")
            if not 0 <= index < len(bank.entries):
                raise self.fail(
                    f"{field}[{rank - 1}]",
                    f"index {index} is outside the memory bank of {self.persona} ({len(bank.entries)} entries)",
                )
            hits.append(RetrievalHit(entry_id=index, rank=rank, score=None, entry=bank.entries[index]))
        return hits

    def memory_access(
        self,
        *,
        step: int | None,
        phase: str,
        query: str,
        reason: str | None,
        indices: Any,
        answer: str | None,
        field: str,
    ) -> None:
        """history.query -> history.retrieval (hits resolved, ranked by list position) -> generator rationale."""
        bank = self._bank(field)
        hits = self._hits(indices, field, bank)
        asked = self.writer.add(HistoryQuery(step=step, phase=phase, query=query, reason=reason or None))
        retrieved = self.writer.add(
            HistoryRetrieval(
                step=step,
                query=query,
                model_id=IMPORTED_RETRIEVER,
                index_hash=bank.hash,
                k=max(RUNNER_TOP_K, len(hits)),
                threshold=RUNNER_THRESHOLD,
                hits=hits,
            ),
            causation_id=asked.event_id,
        )
        if answer:
            self.writer.add(
                Rationale(step=step, source="generator", text=answer, cited_entry_ids=[h.entry_id for h in hits]),
                causation_id=retrieved.event_id,
            )

    def observation(self, *, step: int, url: str | None, description: str | None = None) -> None:
        self.writer.add(Observation(step=step, url=url or "", description=description or None))

    def rationale(self, *, step: int, text: str) -> None:
        self.writer.add(Rationale(step=step, source="planner", text=text))

    def action(
        self,
        *,
        step: int,
        raw: str,
        parsed: ParsedAction | None,
        error: str | None = None,
        status: Literal["executed", "invalid", "blocked"] | None = None,
    ) -> None:
        """``status`` defaults to invalid with an ``error``, else executed; ``blocked``: chosen, not carried out."""
        status = status or ("invalid" if error else "executed")
        self.writer.add(Action(step=step, raw=raw, parsed=parsed, status=status, error=error))

    def finished(
        self,
        *,
        end_reason: EndReason,
        answer: str | None,
        final_url: str | None,
        steps: int,
        detail: str | None = None,
    ) -> None:
        finished = EpisodeFinished(
            end_reason=end_reason, answer=answer, final_url=final_url or None, steps=steps, detail=detail
        )
        self.writer.add(finished)
