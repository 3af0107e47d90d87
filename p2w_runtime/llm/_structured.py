"""Structured answers: find the JSON a model wrote, validate it, and say precisely what was wrong.

Models wrap JSON in prose or code fences even when asked not to; accepting those
wrappers costs nothing and saves a paid repair round.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class MalformedOutput(ValueError):
    """The answer holds no JSON value matching the schema; the message says why, for the repair prompt."""


def parse_structured(text: str, schema: type[T]) -> T:
    value = _extract_json(text)
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise MalformedOutput(f"does not match {schema.__name__}: {problems}") from None


def _extract_json(text: str) -> Any:
    candidates = [text.strip(), *(m.strip() for m in _FENCE.findall(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep for the parser
            continue
    raise MalformedOutput(f"no JSON object found in the answer: {text[:200]!r}")


def repair_messages(messages: list[dict[str, Any]], answer: str, problem: str) -> list[dict[str, Any]]:
    """The conversation plus the bad answer and what was wrong, so the model can correct itself."""
    return [
        *messages,
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": f"Your answer was not valid: {problem}. Reply again with only the JSON object, nothing else.",
        },
    ]
