"""Recorded vs re-executed decisions, in order: the first one that differs is the episode's mismatch.

Observations and the final state are excluded: on rerun they come from the recording itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from p2w_runtime.domain.trajectory import (
    ActionRecord,
    EpisodeRecord,
    FinishedRecord,
    HistoryAccess,
    LlmCallRecord,
    RationaleRecord,
    RetrievalRecord,
)
from p2w_runtime.rerun._mismatch import Mismatch, MismatchKind
from p2w_runtime.retrieval import same_hits


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str
    step: int | None
    value: Any
    shown: str


def decision(record: EpisodeRecord) -> Decision | None:
    """The part of an event that the agent's code decides, or None for what the recording provides."""
    if isinstance(record, LlmCallRecord):
        if record.error is not None:
            return None  # a failed attempt: only the attempt that answered is a decision
        key = (record.role, record.fingerprint, record.ordinal)
        return Decision("llm", record.step, key, f"{record.role} call {record.fingerprint[:12]}")
    if isinstance(record, HistoryAccess):
        return Decision("query", record.step, (record.phase, record.query), record.query)
    if isinstance(record, RetrievalRecord):
        hits = [(hit.entry_id, hit.score) for hit in record.hits]
        return Decision("retrieval", record.step, hits, f"entries {[entry_id for entry_id, _ in hits]}")
    if isinstance(record, RationaleRecord):
        value = (record.source, record.text, record.cited_entry_ids)
        return Decision("rationale", record.step, value, f"{record.source}: {record.text}")
    if isinstance(record, ActionRecord):
        parsed = (record.parsed.name, record.parsed.args) if record.parsed else None
        shown = f"{record.raw} ({record.status}{': ' + record.error if record.error else ''})"
        return Decision("action", record.step, (record.raw, parsed, record.status, record.error), shown)
    if isinstance(record, FinishedRecord):
        shown = f"{record.end_reason} after {record.steps} step{'' if record.steps == 1 else 's'}" + (
            f", answer {record.answer!r}" if record.answer is not None else ""
        )
        return Decision("end", record.steps, (record.end_reason, record.answer, record.steps), shown)
    return None


def decisions(events: Sequence[EpisodeRecord]) -> list[Decision]:
    return [d for e in events if (d := decision(e)) is not None]


_KINDS: dict[str, MismatchKind] = {
    "llm": "prompt changed",
    "query": "history query differs",
    "retrieval": "retrieval hits differ",
    "rationale": "rationale differs",
    "action": "action differs",
}


def first_mismatch(
    recorded: Sequence[EpisodeRecord],
    rerun: Sequence[EpisodeRecord],
    seam: Mismatch | None,
    *,
    own_agent: bool = False,
) -> Mismatch | None:
    """None when every decision is the same; a seam's divergence wins where the rerun stopped because of it.

    ``own_agent``: the recording is p2w-rt's agent's, whose error ends once counted no steps (``_same``)."""
    was, now = decisions(recorded), decisions(rerun)
    for old, new in zip(was, now, strict=False):
        if _same(old, new, own_agent):
            continue
        if seam is not None and new.kind == "end":
            return seam
        found = _mismatch(old, new)
        if found.kind in ("ends earlier", "ends later", "outcome differs"):  # show how each episode ended
            found = replace(found, recorded=_end(was), reexecuted=_end(now))
        return found
    if len(was) != len(now):  # only an unfinished recording or rerun gets here: the first decision one side lacks
        if len(now) < len(was):
            return seam or Mismatch(None, "ends earlier", was[len(now)].shown, None)
        return seam or Mismatch(None, "ends later", None, now[len(was)].shown)
    return None


def _same(old: Decision, new: Decision, own_agent: bool) -> bool:
    """Retrievals are the same answer by ``same_hits``: ties as sets, scores within ``SCORE_TOLERANCE``.

    The own agent's error recorded after 0 steps matches an error after any: the agent once wrote 0 for every
    error, and today's writes 0 only when it fails before step 2, as a rerun that decided the same up to its end
    does too (docs/design/rerun.md, "Steps of an episode that ends in an error")."""
    if old.kind == new.kind == "retrieval":
        return same_hits(old.value, new.value)
    if own_agent and old.kind == new.kind == "end" and old.value[0] == "error" and old.value[2] == 0:
        return old.value[:2] == new.value[:2]
    return old.value == new.value


def _scores_shown(hits: Sequence[tuple[int, float | None]]) -> str:
    return "entries [" + ", ".join(f"{entry_id} ({score:.6f})" for entry_id, score in hits if score is not None) + "]"


def _end(decided: Sequence[Decision]) -> str | None:
    return decided[-1].shown if decided and decided[-1].kind == "end" else None


def _mismatch(old: Decision, new: Decision) -> Mismatch:
    step = new.step if "end" in (old.kind, new.kind) else old.step  # where the rerun ended or went on
    if old.kind == "end" and new.kind == "end":
        kind: MismatchKind = "outcome differs"
        if new.value[2] != old.value[2]:
            kind = "ends earlier" if new.value[2] < old.value[2] else "ends later"
    elif new.kind == "end":
        kind = "ends earlier"
    elif old.kind == "end":
        kind = "ends later"
    elif "action" in (old.kind, new.kind):
        kind = "action differs"
    else:
        kind = _KINDS[old.kind]
        if old.kind == new.kind == "retrieval" and old.shown == new.shown:  # the same entries: a score is what differs
            return Mismatch(step, kind, _scores_shown(old.value), _scores_shown(new.value))
    return Mismatch(step, kind, old.shown, new.shown)
