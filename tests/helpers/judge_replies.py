"""What a scripted judge model replies to the ``rubric-llm`` judge: the criteria its request asks for, each scored."""

from __future__ import annotations

import json
from typing import Any

TOP = {"web": 5, "pref": 2.5, "location": 2.5, "intent": 10}


def fields(request: dict[str, Any]) -> list[str]:
    """The criteria the request's JSON schema asks for, in order."""
    return list(request["response_format"]["json_schema"]["schema"]["properties"])


def answer(request: dict[str, Any], intent: int = 10, cite: str = "E1") -> str:
    """What a judge model would reply: every criterion at its maximum, citing one event tag."""
    body = {}
    for name in fields(request):
        score = intent if name == "intent" else TOP[name.split("_")[0]]
        body[name] = {"score": score, "evidence": [cite], "justification": f"{name} looks right"}
    return json.dumps(body)
