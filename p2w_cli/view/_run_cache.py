"""The runs the viewer has read, kept while the store's log is unchanged, and brought forward when what was appended
since is results about the run (judgments, human labels, classifications) rather than the run itself.

Labelling a large run in the viewer appends one judgment per label; reading the whole run again after each (its
episodes, every judgment and classification) cost about a second at 10,000 episodes. The log is append-only, so what
changed since a read at log end E is the events after E: when every one of the run's is a judgment or a
classification, each is applied to its row by the rule ``read_run`` applies to all of them (the latest current result
per episode and producer, a judge's at its newest version), which gives the read ``read_run`` would make now
(docs/design/view.md, "After a label").
"""

from __future__ import annotations

from p2w_cli.view._run_read import (
    RunRead,
    classifications_of,
    label_rows,
    read_run,
    score_rows,
)
from p2w_rt.replay.classify import CLASSIFICATION_LABELS, ClassificationRecord, LabelsRecord
from p2w_rt.replay.judges import JUDGMENT_SCORES, JudgmentRecord, ScoresRecord, read_judgments
from p2w_runtime.domain import RunInfo, under
from p2w_runtime.store import EventStore

ADVANCE_LIMIT = 5_000
"""Events of the run appended since a kept read beyond which it is read again whole: a judging pass over the run
appends one per episode, and reading those one by one would cost what the whole read does."""


async def advance(store: EventStore, read: RunRead, since: int, end: int) -> bool:
    """Bring ``read``, made at log end ``since``, to ``end`` when all the run appended in between is judgments and
    classifications (and their calls and seals); False, ``read`` untouched, when anything else of the run was (an
    episode's event, the run's end, a new attempt) or more than ``ADVANCE_LIMIT`` events."""
    run_id = read.info.run_id
    judged, classified = JUDGMENT_SCORES.name(run_id), CLASSIFICATION_LABELS.name(run_id)
    scores: list[ScoresRecord] = []
    labels: list[LabelsRecord] = []
    events = store.read_all(after_position=since, stream_prefix=under(run_id))
    try:
        count = 0
        async for event in events:
            if (event.position or 0) > end:
                break
            count += 1
            if count > ADVANCE_LIMIT:
                return False
            if event.stream == judged:
                if (scored := JUDGMENT_SCORES.record_of(event)) is not None:
                    scores.append(scored)
            elif event.stream == classified:
                if (labelled := CLASSIFICATION_LABELS.record_of(event)) is not None:
                    labels.append(labelled)
            else:
                return False
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    _apply(read, scores, labels)  # no await from here on: a page being rendered meanwhile sees it all or none of it
    return True


def _apply(read: RunRead, scores: list[ScoresRecord], labels: list[LabelsRecord]) -> None:
    if not scores and not labels:
        return
    score_rows(read, scores)
    if labels:
        read.labels += labels
        touched = {r.classification.episode_stream for r in labels} & read.rows.keys()
        rows = {stream: read.rows[stream] for stream in touched}
        for row in rows.values():
            row.labels.clear()
        label_rows(rows, [r for r in read.labels if r.classification.episode_stream in touched])
    read.judgments = read.classifications = read.facets = None  # read or computed again when next asked for
    read.kept.clear()


class RunCache:
    """``RunRead``s kept while the store is unchanged: ``end`` is the log's last position when the caller found
    the run (``RunIndex``); a page after a new append brings the kept read forward (``advance``) or reads again, any
    other page is served from memory. The least recently read runs go first beyond ``size``."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: dict[str, tuple[int, RunRead]] = {}
        self.advanced = 0
        """Reads brought forward rather than read again: the tests' witness of ``advance``."""

    def holds(self, run_id: str, end: int) -> bool:
        """Whether the run's read at log end ``end`` is kept."""
        cached = self.entries.get(run_id)
        return cached is not None and cached[0] == end

    async def get(self, store: EventStore, info: RunInfo, end: int) -> RunRead:
        cached = self.entries.pop(info.run_id, None)
        if cached is not None and cached[0] == end:
            read = cached[1]
        elif cached is not None and cached[0] < end and await advance(store, cached[1], cached[0], end):
            read = cached[1]
            read.info = info
            self.advanced += 1
        else:
            read = await read_run(store, info)
        read.end = end
        self.entries[info.run_id] = (end, read)
        while len(self.entries) > self.size:
            self.entries.pop(next(iter(self.entries)))
        return read

    async def judgments(self, store: EventStore, info: RunInfo, end: int) -> list[JudgmentRecord]:
        read = await self.get(store, info, end)
        if read.judgments is None:
            read.judgments = await read_judgments(store, info.run_id)
        return read.judgments

    async def classifications(self, store: EventStore, info: RunInfo, end: int) -> list[ClassificationRecord]:
        return await classifications_of(store, await self.get(store, info, end))
