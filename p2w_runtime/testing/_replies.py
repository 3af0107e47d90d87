"""What the scripted LLM server can answer, and how a test picks an answer.

Replies are plain frozen values so a script reads like the dialogue it stands
for; rules match on the request's content, not on call order, so a test can
script a competent planner/generator without counting calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class Text:
    """A normal completion. ``usage="auto"`` estimates tokens (chars / 4); ``None`` omits the usage block."""

    content: str
    usage: Usage | Literal["auto"] | None = "auto"
    finish_reason: str = "stop"


@dataclass(frozen=True, slots=True)
class HttpError:
    """An OpenAI-style error body with the given status (429 and 5xx are what providers send under load)."""

    status: int = 500
    message: str = "scripted server error"
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait, then answer ``then``: longer than the client's timeout forces a timeout."""

    seconds: float
    then: Text | ToolCall | HttpError | Garbage = field(default_factory=lambda: Text("late answer"))


@dataclass(frozen=True, slots=True)
class Garbage:
    """A 200 that is not a chat completion: a str body is sent raw, a dict as JSON (e.g. without ``choices``)."""

    body: str | dict[str, Any] = "<html><body>502 Bad Gateway</body></html>"
    status: int = 200
    content_type: str = "text/html"

    @classmethod
    def without_choices(cls) -> Garbage:
        return cls(body={"id": "chatcmpl-garbage", "object": "chat.completion", "model": "scripted"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """An answer that calls one of the request's tools: ``arguments`` is the JSON text the model would send."""

    name: str
    arguments: str = "{}"


Reply = Text | ToolCall | HttpError | Delay | Garbage
RequestJson = dict[str, Any]
ReplySpec = Reply | str | Callable[[RequestJson], "Reply | str"]
Predicate = Callable[[RequestJson], bool]


def message_text(message: dict[str, Any]) -> str:
    """Text of one chat message, joining the text parts of multi-part content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _messages(request: RequestJson, role: str) -> list[str]:
    messages = request.get("messages") or []
    return [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == role]


def last_user_message(request: RequestJson) -> str:
    users = _messages(request, "user")
    return users[-1] if users else ""


def system_message(request: RequestJson) -> str:
    return "\n".join(_messages(request, "system"))


def last_user_contains(*needles: str) -> Predicate:
    return lambda request: all(n in last_user_message(request) for n in needles)


def system_contains(*needles: str) -> Predicate:
    """Match a role marker: the agent's system prompts say which role (planner, generator, judge) is asked."""
    return lambda request: all(n in system_message(request) for n in needles)


def all_of(*predicates: Predicate) -> Predicate:
    return lambda request: all(p(request) for p in predicates)


@dataclass(slots=True)
class Rule:
    """Answer ``reply`` to requests matching ``when`` (a str means: the last user message contains it).

    ``times`` bounds how often the rule fires (None: forever); rules are tried in order.
    """

    when: str | Predicate
    reply: ReplySpec
    times: int | None = None
    fired: int = 0

    def matches(self, request: RequestJson) -> bool:
        if self.times is not None and self.fired >= self.times:
            return False
        if isinstance(self.when, str):
            return self.when in last_user_message(request)
        return bool(self.when(request))


def resolve(spec: ReplySpec, request: RequestJson) -> Reply:
    """Turn a reply spec (value, bare string, or function of the request) into a reply."""
    reply = spec(request) if callable(spec) else spec
    return Text(reply) if isinstance(reply, str) else reply
