"""Reading the model's replies in the formats the prompts ask for; lenient about spacing, strict about content."""

from __future__ import annotations

import re
from dataclasses import dataclass

_THOUGHT = re.compile(r"^\s*Thought\s*:\s*(.*?)(?=^\s*[*_]*Action[*_]*\s*:|```|\Z)", re.S | re.M | re.I)
_ANSWER = re.compile(r"^\s*Answer\s*:\s*(.*?)(?=^\s*Cited\s*:|\Z)", re.S | re.M | re.I)
_CITED = re.compile(r"^\s*Cited\s*:\s*(.*)$", re.M | re.I)
_TASK = re.compile(r"^\s*Task\s*:\s*(.+)", re.S | re.M | re.I)


def planner_thought(reply: str) -> str:
    """The reasoning the planner gave for its action (the action itself is read by ``extract_action``)."""
    thought = _THOUGHT.search(reply)
    return thought.group(1).strip() if thought else ""


@dataclass(frozen=True, slots=True)
class GeneratorReply:
    answer: str
    cited: list[int]


def parse_generator(reply: str, known_ids: set[int]) -> GeneratorReply:
    """The memory answer and the cited ids that were actually shown (a model citing others is not trusted)."""
    answer = _ANSWER.search(reply)
    cited = _CITED.search(reply)
    ids = [int(n) for n in re.findall(r"\d+", cited.group(1))] if cited else []
    text = answer.group(1).strip() if answer else reply.strip()
    return GeneratorReply(text, [i for i in dict.fromkeys(ids) if i in known_ids])


def parse_queries(reply: str, limit: int) -> list[str]:
    """Pre-execution questions: ``- question`` lines after ``Queries:``; ``none`` means no history needed."""
    body = re.sub(r"^\s*Queries\s*:", "", reply, count=1, flags=re.I).strip()
    if re.fullmatch(r"none\.?", body.split("\n", 1)[0].strip(), re.I):
        return []
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip() for line in body.splitlines()]
    return [line for line in lines if line and line.lower() != "none"][:limit]


def parse_rewrite(reply: str, fallback: str) -> str:
    match = _TASK.search(reply)
    return match.group(1).strip() if match else fallback
