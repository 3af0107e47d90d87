"""The scripted OpenAI-compatible server, the one test double, shared by tests, benchmarks and the demo; and
hand-built episodes for tests and benchmarks (``p2w_runtime.testing.episodes``)."""

from p2w_runtime.testing._replies import (
    Delay,
    Garbage,
    HttpError,
    Reply,
    ReplySpec,
    Rule,
    Text,
    ToolCall,
    Usage,
    all_of,
    last_user_contains,
    last_user_message,
    message_text,
    system_contains,
    system_message,
)
from p2w_runtime.testing._scripted_llm import ReceivedRequest, ScriptedLlm

__all__ = [
    "Delay",
    "Garbage",
    "HttpError",
    "ReceivedRequest",
    "Reply",
    "ReplySpec",
    "Rule",
    "ScriptedLlm",
    "Text",
    "ToolCall",
    "Usage",
    "all_of",
    "last_user_contains",
    "last_user_message",
    "message_text",
    "system_contains",
    "system_message",
]
