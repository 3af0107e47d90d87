"""The recorded LLM: today's requests answered from the episode's ``llm.call`` events, keyed as recorded.

A subclass of ``LlmClient`` that replaces only the transport, so fingerprints, ordinals, role params,
the recorded ``llm.call`` payloads and the totals are computed by the same code as when recording.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping
from typing import Any

from p2w_rt.schemas import LlmUsage
from p2w_runtime.domain.trajectory import LlmCallRecord
from p2w_runtime.llm import BadResponse, Completion, LlmClient, RetryPolicy, fingerprint
from p2w_runtime.rerun._mismatch import Divergence, Mismatch
from p2w_runtime.rerun._recorded import RecordedEpisode

_NOWHERE = "http://recorded.invalid/v1"
"""Never contacted: the transport below answers every request."""


class RecordedLlm(LlmClient):
    """One client per rerun (its transport is never used); ``replaying`` binds a view to one recorded episode."""

    def __init__(self, model: str, role_params: Mapping[str, Mapping[str, Any]]) -> None:
        super().__init__(model, base_url=_NOWHERE, role_params=role_params, retry=RetryPolicy(max_retries=0))
        self.episode: RecordedEpisode | None = None
        self.divergence = Divergence()
        self._seen: Counter[str] = Counter()
        self._asked = 0

    def replaying(self, episode: RecordedEpisode, divergence: Divergence) -> RecordedLlm:
        """A view answering from ``episode``; divergences go to ``divergence``."""
        scope = self.scoped(None)
        scope.episode, scope.divergence = episode, divergence
        return scope

    async def __aenter__(self) -> RecordedLlm:
        return self

    def scoped(self, sink: Any) -> RecordedLlm:
        scope = super().scoped(sink)
        assert isinstance(scope, RecordedLlm)
        scope._seen, scope._asked = Counter(), 0
        return scope

    async def _send(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Completion:
        if self.episode is None:
            raise RuntimeError("RecordedLlm answers only through replaying(episode)")
        key = fingerprint(self.model, messages, params)
        ordinal, position = self._seen[key], self._asked
        self._seen[key] += 1
        self._asked += 1
        attempts = self.episode.attempts.get((key, ordinal))
        if not attempts:
            raise self.divergence.raise_(await self._changed(key, messages, params, position))
        answered = next((a for a in attempts if a.answered), None)
        if answered is None:  # every recorded attempt failed: fail the same way
            raise BadResponse(attempts[-1].error or "no answer recorded")
        return recorded_completion(answered)

    async def _changed(
        self, key: str, messages: list[dict[str, Any]], params: dict[str, Any], position: int
    ) -> Mismatch:
        assert self.episode is not None
        return await prompt_changed(self.episode, key, messages, params, position)


async def prompt_changed(
    episode: RecordedEpisode, key: str, messages: list[dict[str, Any]], params: dict[str, Any], position: int
) -> Mismatch:
    """A request with no recording: diffed against the recorded call made at the same point (``position``-th)."""
    before = episode.answered[position] if position < len(episode.answered) else None
    step = before.step if before is not None else None
    now = render_request(messages, params)
    was = render_request(*await episode.request(before)) if before is not None else ""
    diff = "".join(
        difflib.unified_diff(
            was.splitlines(keepends=True), now.splitlines(keepends=True), "recorded", "re-executed", n=2
        )
    )
    return Mismatch(
        step,
        "prompt changed",
        _summary(before) if before is not None else None,
        f"request {key[:12]} (no recorded call has this fingerprint)",
        diff,
    )


def render_request(messages: list[dict[str, Any]], params: Mapping[str, Any]) -> str:
    """A request as lines a diff can align: params, then each message under its role."""
    lines = [f"[params] {dict(sorted(params.items()))}"]
    for message in messages:
        lines.append(f"[{message.get('role', '?')}]")
        lines.append(str(message.get("content", "")))
    return "\n".join(lines) + "\n"


def recorded_completion(call: LlmCallRecord) -> Completion:
    """The answer a recorded call got, as the transport returns it."""
    assert call.response is not None
    u = call.usage
    usage = None
    if u is not None:
        usage = LlmUsage(
            prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, total_tokens=u.total_tokens
        )
    return Completion(call.response, call.finish_reason, usage, call.model)


def _summary(call: LlmCallRecord) -> str:
    return f"{call.role} call at step {call.step} ({call.fingerprint[:12]}, ordinal {call.ordinal})"
