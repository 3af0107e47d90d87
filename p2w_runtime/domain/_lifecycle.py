"""A run's lifecycle, for every writer of runs: started (its label held, its dataset carried), resumed, its
episodes numbered, closed.

The own agent and its workers, both importers, ``fork``, ``rerun --record-as`` and the public recording API open
and close their runs here, so a field of ``run.started`` or a rule of resuming is written once and cannot drift
between them (docs/design/run-lifecycle.md). Writing an episode's events stays ``EpisodeWriter``'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import ValidationError

from p2w_rt.schemas import EmbedderRef, EpisodeFinished, NewEvent, RunConfig, RunFinished, RunStarted, Scheme, uuid7
from p2w_runtime.domain._listing import EpisodeRef, counted, episodes_of
from p2w_runtime.domain._runs import list_runs
from p2w_runtime.domain._seal import append_sealed
from p2w_runtime.domain._started import Provenance, TaskLike
from p2w_runtime.domain._streams import attempt_id, check_task_id
from p2w_runtime.domain._summary_rows import NOT_AN_OUTCOME
from p2w_runtime.domain._writer import EpisodeWriter
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore, LabelTaken, StreamEnded, hold_claims, seal_streams

if TYPE_CHECKING:
    from p2w_runtime.domain._dataset import CarriedDataset

T = TypeVar("T", bound=TaskLike)
UNFINISHED_DETAIL = "unfinished when the run was resumed"


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What a new run states in its ``run.started``: who recorded what, on which task set, carrying which files."""

    label: str
    agent: str
    model: str
    scheme: Scheme | None
    provenance: Provenance
    config: Mapping[str, Any] = field(default_factory=dict)
    source: Literal["recorded", "imported"] = "recorded"
    import_format: str | None = None
    carried: CarriedDataset | None = None
    """The files it carries (``carry_dataset``, ``derived_dataset``); their bytes are stored with the start."""
    embedder: EmbedderRef | None = None
    caused_by: str | None = None
    """The event the run was made from (``rerun --record-as``: the source run's ``run.started``)."""


@dataclass(frozen=True, slots=True)
class TakenOver:
    """A task a recorder sharing the run records next: its attempt number, and the dead attempts it closed."""

    attempt: int
    closed: list[str]


class RunRecording:
    """An open run: the attempts it held when opened, the next attempt at each task, and ``close``."""

    def __init__(self, store: EventStore, run_id: str, attempts: Sequence[EpisodeRef] = (), aborted: int = 0) -> None:
        self.store = store
        self.run_id = run_id
        self.attempts = list(attempts)
        """Every attempt when the run was opened (none for a new run)."""
        self.counted = {ref.task_id: ref for ref in counted(attempts)}
        """Per task, the episode that counted when the run was opened: its task is not recorded again."""
        self.aborted = aborted
        """Unfinished attempts closed as ``aborted`` on resuming."""
        self.done = set(self.counted)
        self._tries = Counter(ref.task_id for ref in attempts)

    def todo(self, tasks: Iterable[T]) -> list[T]:
        """``tasks`` without a counted episode, in their order."""
        return [task for task in tasks if task.task_id not in self.done]

    def episode_id(self, task_id: str, attempt: int | None = None) -> str:
        """Start the next attempt at ``task_id`` (``TASK``, then ``TASK#2``...), or attempt number ``attempt`` when
        another decides it (a worker, from the attempts all workers stored); its episode id. ``BadTaskId`` (nothing
        written) when ``task_id`` cannot name an episode."""
        check_task_id(task_id, f"run {self.run_id}")
        self._tries[task_id] = attempt if attempt is not None else self._tries[task_id] + 1
        return attempt_id(task_id, self._tries[task_id])

    def ended(self, task_id: str, counts: bool) -> None:
        """An episode of the run ended: its task is done when it counts."""
        if counts:
            self.done.add(task_id)

    async def take_over(self, task_id: str, detail: str) -> TakenOver | None:
        """Between recorders sharing the run: None when an attempt at ``task_id`` counts already, else the next
        attempt number, once every attempt left without ``episode.finished`` (its recorder stopped) is closed as
        aborted with ``detail``. Read now, not when opened: the other recorders write meanwhile."""
        attempts = [a for a in await episodes_of(self.store, self.run_id, every_attempt=True) if a.task_id == task_id]
        if counted(attempts):
            return None
        closed = []
        for dead in [a for a in attempts if a.end_reason is None]:
            try:
                await append_sealed(self.store, [await _aborting(self.store, dead, detail)])
            except StreamEnded:  # its own recorder ended it meanwhile (woken after its lease ran out)
                continue
            closed.append(dead.stream)
        return TakenOver(len(attempts) + 1, closed)

    async def close(self, *, interrupted: bool = False, cost_usd: float | None = None) -> RunFinished:
        """Append ``run.finished``, derived from the log (``summary``). A resumed run may be closed again."""
        finished = await self.summary(interrupted=interrupted, cost_usd=cost_usd)
        await self.store.append([NewEvent(stream=self.run_id, payload=finished)])
        return finished

    async def summary(self, *, interrupted: bool = False, cost_usd: float | None = None) -> RunFinished:
        """The ``run.finished`` the log says now, not written: how every attempt ended, how many episodes count, what
        they cost (``cost_usd``, else what every attempt's ``episode.finished`` reports: all sessions of a resumed
        run and every recorder sharing it, not only this one's), and the seals of the run's streams. The status is
        ``interrupted`` when the recording was stopped, else ``failed`` when every counted episode ended in an error
        (nothing was measured), else ``completed``."""
        attempts = await episodes_of(self.store, self.run_id, every_attempt=True)
        if cost_usd is None:
            cost_usd = _reported_cost(attempts)
        reasons = Counter(a.end_reason for a in attempts if a.end_reason is not None)
        outcomes = Counter(a.end_reason for a in counted(attempts) if a.end_reason not in NOT_AN_OUTCOME)
        return RunFinished(
            status="interrupted"
            if interrupted
            else "failed"
            if outcomes and set(outcomes) == {"error"}
            else "completed",
            episodes=sum(outcomes.values()),
            end_reasons=dict(sorted(reasons.items())),
            cost_usd=cost_usd,
            seals=await seal_streams(self.store, self.run_id, into=self.run_id),
        )

    async def close_last(self, leave: Callable[[], Awaitable[bool]], *, interrupted: bool = False) -> RunFinished:
        """``close`` by the last of the recorders sharing the run: ``leave`` gives this one's place back and says
        whether others still record it; then the run stays open and its ``summary`` is returned, not written. One
        leaves at a time (the claim ``close_once`` takes), so of two last ones leaving together one finishes it; a
        recorder joining meanwhile waits for that claim to see whether the run is finished (``check_open``)."""
        async with hold_claims(self.store, [self._finish_key]):
            if await leave():
                return await self.summary(interrupted=interrupted)
            return await self.close(interrupted=interrupted)

    async def close_once(self) -> RunFinished | None:
        """``close`` by whichever recorder sharing the run gets here first (a claim decides); None when it is
        finished already."""
        async with hold_claims(self.store, [self._finish_key]):
            if await self._finished() is not None:
                return None
            return await self.close()

    async def check_open(self, label: str) -> None:
        """Refuse a recorder joining run ``label`` once it is finished: else it would record episodes into a run
        already reported finished, and its close would finish it a second time. Read under the claim the closers
        hold while they look for recorders and finish the run, by a joiner present already (``joining``): a closer
        looking after its arrival sees it and leaves the run open, one that looked before has finished the run by
        the time it is read here. A run its workers finished (it has work items) passes: their loop finds nothing
        left to do, and a late ``record --exec CMD --worker`` exits having recorded nothing. So does an
        ``interrupted`` run, which joiners started again continue, as a resume would."""
        async with hold_claims(self.store, [self._finish_key]):
            finished = await self._finished()
        if finished is not None and finished.status != "interrupted" and not await self.store.work_items(self.run_id):
            raise UserError(
                f"run {label!r} is {finished.status}, nothing more is recorded in it: "
                "open it with resume=True to record the tasks it leaves to do"
            )

    @property
    def _finish_key(self) -> str:
        return f"finish/{self.run_id}"

    async def _finished(self) -> RunFinished | None:
        """The run's last ``run.finished``, read from its stream now. Not only its last event: a recorder whose
        lease was taken over may seal its dropped attempt after another finished the run, and that late
        ``episode.sealed`` must not make the run look unfinished."""
        found = None
        async for event in self.store.read_stream(self.run_id):
            if event.type == "run.finished":
                found = event.decode_payload()
        assert found is None or isinstance(found, RunFinished)
        return found


async def check_label_free(store: EventStore, label: str) -> None:
    """Refuse a label another run holds before any work starts (the database refuses it again when the run is
    created, so a run that takes it meanwhile still loses nothing)."""
    for run in await list_runs(store):
        if run.label == label:
            raise LabelTaken(label, run.run_id, getattr(store, "label", "the store"))


async def start_run(store: EventStore, spec: RunSpec, *, run_id: str | None = None) -> RunRecording:
    """Append a new run's ``run.started`` (id ``run_id``, else a new one) with the files it carries; ``LabelTaken``
    when another run holds the label."""
    run_id = run_id or uuid7()
    started = run_started(run_id, spec)
    await store.append([started], spec.carried.blobs if spec.carried is not None else None)
    return RunRecording(store, run_id)


def run_started(run_id: str, spec: RunSpec) -> NewEvent:
    """The first event of run ``run_id``, in the run's own stream (``start_run`` appends it with its files)."""
    provenance, carried = spec.provenance, spec.carried
    payload = RunStarted(
        run_id=run_id,
        label=spec.label,
        source=spec.source,
        import_format=spec.import_format,
        agent=spec.agent,
        backbone_model=spec.model,
        scheme=spec.scheme,
        dataset_id=provenance.dataset_id,
        dataset_hash=provenance.dataset_hash,
        code_version=provenance.code_version,
        git_sha=provenance.git_sha,
        packages=dict(provenance.packages),
        config=_config(spec),
        host=provenance.host,
        dataset=carried.files if carried is not None else None,
        embedder=spec.embedder,
    )
    return NewEvent(stream=run_id, payload=payload, causation_id=spec.caused_by)


async def resume_run(store: EventStore, run_id: str, *, abort: bool = True) -> RunRecording:
    """Run ``run_id`` with the attempts it holds; ``abort``: close the unfinished ones as ``aborted`` (their
    recorder was killed), so their tasks are recorded again and the dead attempt never counts."""
    attempts = await episodes_of(store, run_id, every_attempt=True)
    unfinished = [ref for ref in attempts if ref.end_reason is None] if abort else []
    closing = [await _aborting(store, ref, UNFINISHED_DETAIL) for ref in unfinished]
    if closing:
        await append_sealed(store, closing)  # in one append: a run is resumed by one recorder
    return RunRecording(store, run_id, attempts, len(closing))


def _config(spec: RunSpec) -> RunConfig:
    """The spec's config, typed; a value of the wrong type under a key p2w-rt reads (an outside agent's config
    through the recording API) is one line naming the run and the field, before anything is written."""
    try:
        return RunConfig.model_validate(dict(spec.config))
    except ValidationError as exc:
        first = exc.errors()[0]
        where, value = ".".join(str(part) for part in first["loc"]), repr(first["input"])[:80]
        raise UserError(f"run {spec.label!r}: config field {where} = {value}: {first['msg']}") from None


async def _aborting(store: EventStore, ref: EpisodeRef, detail: str) -> NewEvent:
    """The ``episode.finished`` closing an attempt whose recorder died, with the steps it completed (those that
    acted), as a recorder stopped in its step counts them, so a reader sees how far it got."""
    acted = {stored.payload["step"] async for stored in store.read_stream(ref.stream) if stored.type == "action"}
    finished = EpisodeFinished(end_reason="aborted", detail=detail, steps=len(acted))
    return EpisodeWriter.closing(ref.stream).add(finished)


def _reported_cost(attempts: Sequence[EpisodeRef]) -> float | None:
    """The sum of the costs the attempts' ``episode.finished`` report; None when none reports one."""
    costs = [a.finished.cost_usd for a in attempts if a.finished is not None and a.finished.cost_usd is not None]
    return round(sum(costs), 6) if costs else None
