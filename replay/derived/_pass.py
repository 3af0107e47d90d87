"""A pass that derives a result for every episode of a run: batched appends, bounded concurrency, counts.

Judging and classifying both work this way. Each result, with the ``llm.call`` events it cost, is
appended to the run's derived stream, caused by the episode's last event. Results that called no LLM
are batched, so a rules pass over thousands of episodes takes a few transactions; results that did
are written at once, so a crash never loses what was paid for. Producers that wait on the network run
``concurrency`` at a time, and the first failure stops the pass with what was made so far kept.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, Self, TypeVar

from p2w_rt.replay.derived._stream import Derived
from p2w_rt.schemas import LlmCall, NewEvent
from p2w_runtime.domain import EpisodeRef, run_of
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.logs import get_logger
from p2w_runtime.store import ClaimHolder, EventStore, append_with_seal, hold_claims

if TYPE_CHECKING:
    from p2w_runtime.llm import Sink

log = get_logger(__name__)

WRITE_BATCH = 200
"""Events appended per transaction while no LLM was called; results with LLM calls are appended at once."""

P = TypeVar("P", bound=Derived)
A = ParamSpec("A")


@dataclass(frozen=True, slots=True)
class Outcome(Generic[P]):
    """One episode's result as the pass reports it: made by this pass, or reused from the cache (``cached``). A
    failure made again that failed the same way is made, not cached; ``event_id`` is then the one on record."""

    stream: str
    task_id: str
    level: int | None
    payload: P
    cached: bool
    event_id: str | None

    @classmethod
    def of(cls, episode: Trajectory | EpisodeRef, payload: P, *, cached: bool, event_id: str | None) -> Self:
        return cls(episode.stream, episode.task_id, episode.level, payload, cached, event_id)


OutcomeT = TypeVar("OutcomeT", bound=Outcome[Any])


@dataclass(slots=True, kw_only=True)
class Tally(Generic[OutcomeT]):
    """A pass's outcomes in the order they landed, counted: made by this pass (``new``, a failure made again
    included) or reused (``cached``), which add up to every result; and ``failed`` among both: a failure in the
    cache is still a failure the exit code reports. ``failures`` counts each distinct error, so one cause failing a
    thousand episodes is reported once."""

    cached: int = 0
    failed: int = 0
    outcomes: list[OutcomeT] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: OutcomeT) -> None:
        self.outcomes.append(outcome)
        self.cached += outcome.cached
        if outcome.payload.status == "failed":
            self.failed += 1
            self.failures[outcome.payload.error or "(no error message)"] += 1

    def first_of_its_kind(self, outcome: OutcomeT) -> bool:
        """Whether ``outcome`` (already added) is a success or the first failure with its error: what to show."""
        return outcome.payload.status != "failed" or self.failures[outcome.payload.error or "(no error message)"] == 1

    @property
    def new(self) -> int:
        """Results made by this pass, failed ones included: what it judged, not what it reused."""
        return len(self.outcomes) - self.cached


SummaryT = TypeVar("SummaryT", bound=Tally[Any])


def call_log() -> tuple[list[LlmCall], Sink]:
    """A list and the sink that fills it: a producer's LLM calls, to be appended next to its result."""
    calls: list[LlmCall] = []

    async def sink(call: LlmCall) -> None:
        calls.append(call)

    return calls, sink


class DerivedWriter:
    """Appends to one run's derived stream; the lock keeps concurrent producers from splitting a batch."""

    def __init__(self, store: EventStore, stream: str) -> None:
        self.store = store
        self.stream = stream
        self._pending: list[NewEvent] = []
        self._lock = asyncio.Lock()
        self._wrote = False

    def _event(self, t: Trajectory, payload: Any) -> NewEvent:
        return NewEvent(stream=self.stream, payload=payload, causation_id=t.last_event_id)

    async def append(self, t: Trajectory, calls: Sequence[LlmCall], payload: Derived) -> str:
        """Append ``calls``, then ``payload``; returns the payload's event id."""
        events = [self._event(t, call) for call in calls]
        event = self._event(t, payload)
        await self._add([*events, event], now=bool(calls))
        return event.event_id

    async def keep_calls(self, t: Trajectory, calls: Sequence[LlmCall]) -> None:
        """Failed attempts are facts too: write the calls of a producer that stops the pass, and all pending."""
        await self._add([self._event(t, call) for call in calls], now=True)

    async def flush(self) -> None:
        """End of the pass: append what is pending, then seal the run's other streams if the pass wrote anything.

        The seal makes a judgment or an episode deleted later visible to ``verify``; a pass that only reused
        cached results writes nothing, not even a seal.
        """
        async with self._lock:
            if self._pending or self._wrote:
                batch, self._pending = self._pending, []
                await append_with_seal(self.store, run_of(self.stream), self.stream, batch)
            self._wrote = False

    async def _add(self, events: list[NewEvent], *, now: bool) -> None:
        async with self._lock:
            self._pending.extend(events)
            if self._pending and (now or len(self._pending) >= WRITE_BATCH):
                await self._append()

    async def _append(self) -> None:
        batch, self._pending = self._pending, []
        await self.store.append(batch)
        self._wrote = True


class Pool:
    """Runs producers ``concurrency`` at a time. A failure is kept and raised by the next ``check`` or by
    ``join``, so the pass stops at the first one; leaving the ``async with`` cancels what still runs."""

    def __init__(self, concurrency: int) -> None:
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self._tasks: set[asyncio.Task[None]] = set()
        self._failures: list[BaseException] = []

    def check(self) -> None:
        if self._failures:
            raise self._failures[0]

    async def start(self, work: Callable[A, Awaitable[None]], *args: A.args, **kwargs: A.kwargs) -> None:
        """Wait for a free slot, then run ``work(*args, **kwargs)`` in the background."""
        await self._slots.acquire()
        task = asyncio.create_task(self._bounded(work, *args, **kwargs))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _bounded(self, work: Callable[A, Awaitable[None]], *args: A.args, **kwargs: A.kwargs) -> None:
        """Call ``work`` here, in the task: a task cancelled before it ran (the pass stopped at a failure) then
        leaves no coroutine behind that was made but never awaited (Python warns of each, at exit)."""
        try:
            await work(*args, **kwargs)
        except BaseException as exc:
            self._failures.append(exc)
        finally:
            self._slots.release()

    async def join(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks)
        self.check()

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class DerivedPass(Generic[OutcomeT, SummaryT]):
    """What a pass over a run holds: the writer of its derived stream, its summary, and who hears outcomes."""

    def __init__(
        self,
        store: EventStore,
        stream: str,
        summary: SummaryT,
        *,
        force: bool,
        on_outcome: Callable[[OutcomeT], None] | None,
    ) -> None:
        self.store = store
        self.writer = DerivedWriter(store, stream)
        self.summary = summary
        self.force = force
        self.on_outcome = on_outcome

    def exclusive(self, keys: Iterable[str]) -> AbstractAsyncContextManager[None]:
        """Hold the claims of this pass (``Producer.claim``) for as long as it runs.

        Two passes that would derive the same results (another process, same run and producer config) then run
        one after the other: the second waits, and finds every result cached instead of paying for it again.
        """

        def waiting(key: str, holder: ClaimHolder) -> None:
            log.warning("waiting for another pass to finish", claim=key, holder=holder.describe())

        return hold_claims(self.store, keys, on_wait=waiting)

    def report(self, outcome: OutcomeT) -> None:
        self.summary.add(outcome)
        if self.on_outcome is not None:
            self.on_outcome(outcome)
