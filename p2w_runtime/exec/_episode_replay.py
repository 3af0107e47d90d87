"""One recorded episode served to a re-executed agent, and what that agent did compared with the recording.

Model calls are answered as ``rerun`` answers the own agent: by fingerprint and ordinal among this episode's calls
with that fingerprint, a call whose every recorded attempt failed failing again. A request the recording does not
hold is the divergence: it is diffed against the recorded call made at the same point, and refused with an error
naming the first field that differs. History queries are answered with the recorded hits, in order. The agent's
would-be events (handed back by the recording API in replay mode) are compared decision by decision with the
recorded ones (``first_mismatch``, the comparison of ``rerun``); an agent that hands back nothing is compared by
the model calls it made.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Protocol

import msgspec
import openai

from p2w_rt.schemas import Event, LlmRole
from p2w_runtime.domain.trajectory import EpisodeRecord, LlmCallRecord, Trajectory, project
from p2w_runtime.exec._live import LIVE_FAILED, LiveModel
from p2w_runtime.llm import Api, completion_of, fingerprint, read_request, render_answer
from p2w_runtime.rerun import Mismatch, RecordedEpisode, first_mismatch, prompt_changed


class Volatile(Protocol):
    """What differs on every run of an agent where nothing it decided did (Browser-Use: the date, tab ids, the
    indices of page elements), so that its recording still answers it."""

    def messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with the volatile parts blanked: requests are matched by the fingerprint of what is left,
        recorded and re-executed alike."""
        ...

    def answer(self, recorded: list[dict[str, Any]], now: list[dict[str, Any]], response: str) -> str:
        """The recorded ``response`` to ``recorded`` messages, made to mean the same to the ``now`` messages."""
        ...

    def as_recorded(self, record: EpisodeRecord) -> EpisodeRecord:
        """A handed-back record as the recording would say it (what ``answer`` changed, changed back)."""
        ...


_Key = tuple[str, int]
Live = tuple[int, LiveModel, openai.AsyncOpenAI]
"""A fork's step, its live model and the client asking it."""

_ROLES: dict[str | None, LlmRole] = {"planner": "planner", "generator": "generator"}
"""The roles a call may name (``x-p2w-role``) when the agent hands back no events of its own."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer of the endpoint: status, content type, body."""

    status: int
    content_type: str
    body: str


class EpisodeReplay:
    """Serves one recorded episode to the re-executed agent and keeps what it did: the first request the recording
    could not answer, the calls it answered, and the episode the agent handed back."""

    def __init__(self, source: RecordedEpisode, volatile: Volatile | None = None, live: Live | None = None) -> None:
        self.source = source
        self.volatile = volatile
        self.live = live
        """Set by ``fork --exec``: the calls after the recorded ones before its step are answered live."""
        self._live_from = 0 if live is None else sum(c.step is not None and c.step < live[0] for c in source.answered)
        """When set, a request is matched by the fingerprint of its normalised messages and its ordinal among
        those: an agent whose prompts carry the date or browser ids (Browser-Use) is served its recording."""
        self.seam: Mismatch | None = None
        """The first request the recording could not answer (a changed prompt, another history query)."""
        self.calls: list[LlmCallRecord] = []
        """The calls answered, as records: compared when the agent hands back no events."""
        self.handed_back: Trajectory | None = None
        self._seen: Counter[str] = Counter()
        self._seen_normalised: Counter[str] = Counter()
        self._normalised: dict[_Key, _Key] | None = None
        self._served: dict[_Key, _Key] = {}
        """The re-executed call (fingerprint, ordinal) -> the recorded one that answered it."""
        self._asked = 0
        self._retrievals = 0
        self._serial = itertools.count(1)

    # -- serving ---------------------------------------------------------------------------------------

    async def call(self, api: Api, body: dict[str, Any], role: str | None) -> Answer:
        """The recorded answer to a model call, rendered as asked (chat or responses, streamed or not), or a 400
        naming the first field that differs from the recorded call (the non-determinism error)."""
        wire = read_request(api, body)
        if self.live is not None and self._asked >= self._live_from:
            self._asked += 1
            _, model, client = self.live
            try:
                completion = await model.answer(client, wire)
            except LIVE_FAILED as exc:
                status, said = model.failed(exc)
                return Answer(status, "application/json", said)
            content_type, text = render_answer(api, completion, wire.model, wire.stream, next(self._serial))
            return Answer(200, content_type, text)
        key = fingerprint(wire.model, wire.messages, wire.params)
        ordinal, position = self._seen[key], self._asked
        self._seen[key] += 1
        self._asked += 1
        was = (
            (key, ordinal)
            if self.volatile is None
            else await self._normalised_key(wire.model, wire.messages, wire.params)
        )
        attempts = self.source.attempts.get(was)
        if not attempts:
            found = await self._changed(key, wire.model, wire.messages, wire.params, position)
            return refusal(400, f"not in the recording (diverged at step {found.step}): {found.reexecuted}")
        answered = next((a for a in attempts if a.answered), None)
        if answered is None:  # every recorded attempt failed: fail the same way
            return refusal(400, f"the recorded call failed: {attempts[-1].error or 'no answer recorded'}")
        self._served[(key, ordinal)] = was
        chosen = _ROLES.get(role, answered.role)
        self.calls.append(LlmCallRecord("", chosen, wire.model, *was, answered.step, answered.response))
        recorded = await self.source.call_event(answered)  # every choice of the answer, not only the first
        completion = completion_of(recorded)
        if self.volatile is not None:
            meant = partial(self.volatile.answer, recorded.messages, wire.messages)
            choices = tuple(replace(choice, text=meant(choice.text)) for choice in completion.choices)
            completion = replace(completion, text=meant(completion.text), choices=choices)
        content_type, text = render_answer(api, completion, wire.model, wire.stream, next(self._serial))
        return Answer(200, content_type, text)

    async def _normalised_key(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> _Key:
        """The recorded (fingerprint, ordinal) whose normalised request is this one's, at the same ordinal among
        those; a key with no recorded attempts when there is none."""
        assert self.volatile is not None
        if self._normalised is None:
            self._normalised = {}
            seen: Counter[str] = Counter()
            for call in self.source.trajectory.calls:
                if (call.fingerprint, call.ordinal) in self._normalised.values():
                    continue  # a retried attempt of a call already keyed
                was_messages, was_params = await self.source.request(call)
                same = fingerprint(call.model, self.volatile.messages(was_messages), was_params)
                self._normalised[(same, seen[same])] = (call.fingerprint, call.ordinal)
                seen[same] += 1
        same = fingerprint(model, self.volatile.messages(messages), params)
        ordinal = self._seen_normalised[same]
        self._seen_normalised[same] += 1
        return self._normalised.get((same, ordinal), (same, ordinal))

    async def _changed(
        self, key: str, model: str, messages: list[dict[str, Any]], params: dict[str, Any], position: int
    ) -> Mismatch:
        found = await prompt_changed(self.source, key, messages, params, position)
        answered = self.source.answered
        if position < len(answered):
            was_messages, was_params = await self.source.request(answered[position])
            if self.volatile is not None:  # the first difference that matters, not the date or a tab id
                was_messages, messages = self.volatile.messages(was_messages), self.volatile.messages(messages)
            was = {"model": answered[position].model, "messages": was_messages, "params": was_params}
            field = first_field(was, {"model": model, "messages": messages, "params": params})
            found = replace(found, reexecuted=f"request {key[:12]}: {field}")
        return self._diverged(found)

    def retrieval(self, query: str) -> dict[str, Any] | Mismatch:
        """The next recorded retrieval when it answered ``query``: hits, model id, index hash, k, threshold."""
        recorded = self.source.retrievals
        was = recorded[self._retrievals] if self._retrievals < len(recorded) else None
        if was is None or was.query != query:
            shown = was.query if was is not None else "no further history query"
            step = was.step if was is not None else None
            return self._diverged(Mismatch(step, "history query differs", shown, query))
        self._retrievals += 1
        hits = [{"entry_id": h.entry_id, "rank": h.rank, "score": h.score, "entry": _entry(h.entry)} for h in was.hits]
        return {
            "hits": hits,
            "model_id": was.model_id,
            "index_hash": was.index_hash,
            "k": was.k,
            "threshold": was.threshold,
        }

    def hand_back(self, events: list[dict[str, Any]]) -> None:
        """The episode as the agent would have recorded it."""
        self.handed_back = project(Event.model_validate(event) for event in events)

    def _diverged(self, mismatch: Mismatch) -> Mismatch:
        if self.seam is None:
            self.seam = mismatch
        return mismatch

    # -- comparing -------------------------------------------------------------------------------------

    def mismatch(self) -> Mismatch | None:
        """The first decision of the re-executed agent that differs from the recording, or None."""
        if self.handed_back is not None:
            records = [self._as_served(record) for record in self.handed_back.records]
            if self.volatile is not None:
                records = [self.volatile.as_recorded(record) for record in records]
            return self._seam_first(first_mismatch(self.source.events, records, self.seam))
        recorded: list[EpisodeRecord] = [c for c in self.source.trajectory.calls if c.answered]
        return first_mismatch(recorded, list(self.calls), self.seam)

    def _seam_first(self, found: Mismatch | None) -> Mismatch | None:
        """The refused request when the difference found came at or after it: an agent that goes on after a
        refusal (Browser-Use records it as a failed step and asks again) differs because of it."""
        seam = self.seam
        if seam is not None and found is not None and seam.step is not None and (found.step or 0) >= seam.step:
            return seam
        return found

    def _as_served(self, record: EpisodeRecord) -> EpisodeRecord:
        """A handed-back call under the recorded key that answered it (they differ only when normalised)."""
        if type(record) is LlmCallRecord and (served := self._served.get((record.fingerprint, record.ordinal))):
            return msgspec.structs.replace(record, fingerprint=served[0], ordinal=served[1])
        return record


def refusal(status: int, message: str) -> Answer:
    """An OpenAI-style error body, which the SDK raises as ``openai.BadRequestError`` (not retried)."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": "not_recorded"}}
    return Answer(status, "application/json", json.dumps(body))


def first_field(was: Any, now: Any, path: str = "") -> str:
    """Where two request bodies first differ, as ``messages[0].content: recorded '...', now '...'``."""
    if isinstance(was, dict) and isinstance(now, dict):
        for name in [*was, *(k for k in now if k not in was)]:
            if was.get(name) != now.get(name):
                return first_field(was.get(name), now.get(name), f"{path}.{name}" if path else name)
    if isinstance(was, list) and isinstance(now, list):
        for index, (a, b) in enumerate(zip(was, now, strict=False)):
            if a != b:
                return first_field(a, b, f"{path}[{index}]")
        if len(was) != len(now):
            return f"{path}: recorded {len(was)} items, now {len(now)}"
    if isinstance(was, str) and isinstance(now, str):
        was, now = _around_first_difference(was, now)
    return f"{path}: recorded {was!r}, now {now!r}"


def _around_first_difference(was: str, now: str, width: int = 30) -> tuple[str, str]:
    at = next((i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), min(len(was), len(now)))
    start = max(0, at - width)
    lead = "..." if start else ""
    return lead + was[start : at + width], lead + now[start : at + width]


def _entry(entry: Any) -> dict[str, str]:
    return {"timestamp": entry.timestamp, "type": entry.type, "object": entry.object, "website": entry.website}
