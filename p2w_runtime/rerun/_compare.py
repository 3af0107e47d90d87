"""Recorded vs re-executed decisions, in order: the first one that differs is the episode's mismatch.

Observations and the final state are excluded: on rerun they come from the recording itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from p2w_runtime.rerun._mismatch import Mismatch, MismatchKind
from p2w_runtime.rerun._recorded import Recorded
from schemas import Action, AnyPayload, EpisodeFinished, HistoryQuery, HistoryRetrieval, LlmCall, Rationale


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str
    step: int | None
    value: Any
    shown: str


def decision(payload: AnyPayload) -> Decision | None:
    """The part of an event that the agent's code decides, or None for what the recording provides."""
    if isinstance(payload, LlmCall):
        if payload.error is not None:
            return None  # a failed attempt: only the attempt that answered is a decision
        key = (payload.role, payload.fingerprint, payload.ordinal)
        return Decision("llm", payload.step, key, f"{payload.role} call {payload.fingerprint[:12]}")
    if isinstance(payload, HistoryQuery):
        return Decision("query", payload.step, (payload.phase, payload.query), payload.query)
    if isinstance(payload, HistoryRetrieval):
        ids = [hit.entry_id for hit in payload.hits]
        return Decision("retrieval", payload.step, ids, f"entries {ids}")
    if isinstance(payload, Rationale):
        value = (payload.source, payload.text, payload.cited_entry_ids)
        return Decision("rationale", payload.step, value, f"{payload.source}: {payload.text}")
    if isinstance(payload, Action):
        parsed = payload.parsed.model_dump() if payload.parsed else None
        shown = f"{payload.raw} ({payload.status}{': ' + payload.error if payload.error else ''})"
        return Decision("action", payload.step, (payload.raw, parsed, payload.status, payload.error), shown)
    if isinstance(payload, EpisodeFinished):
        shown = f"{payload.end_reason} after {payload.steps} steps" + (
            f", answer {payload.answer!r}" if payload.answer is not None else ""
        )
        return Decision("end", payload.steps, (payload.end_reason, payload.answer, payload.steps), shown)
    return None


def decisions(events: Sequence[Recorded]) -> list[Decision]:
    return [d for e in events if (d := decision(e.payload)) is not None]


_KINDS: dict[str, MismatchKind] = {
    "llm": "prompt changed",
    "query": "history query differs",
    "retrieval": "retrieval hits differ",
    "rationale": "rationale differs",
    "action": "action differs",
}


def first_mismatch(recorded: Sequence[Recorded], rerun: Sequence[Recorded], seam: Mismatch | None) -> Mismatch | None:
    """None when every decision is the same; a seam's divergence wins where the rerun stopped because of it."""
    was, now = decisions(recorded), decisions(rerun)
    for old, new in zip(was, now, strict=False):
        if old.value == new.value:
            continue
        if seam is not None and new.kind == "end":
            return seam
        found = _mismatch(old, new)
        if found.kind in ("ends earlier", "ends later", "outcome differs"):  # show how each episode ended
            found = replace(found, recorded=_end(was), reexecuted=_end(now))
        return found
    if len(was) != len(now):  # only an unfinished recording or rerun gets here
        return seam or Mismatch(None, "ends earlier" if len(now) < len(was) else "ends later", None, None)
    return None


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
    return Mismatch(step, kind, old.shown, new.shown)
