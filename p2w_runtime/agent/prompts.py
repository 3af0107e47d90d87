"""The prompts of the planner, generator and pre-execution steps.

Each system prompt opens with a fixed marker (``PLANNER``, ``GENERATOR`` ...) so a scripted
test endpoint, and a human reading ``llm.call`` events, can tell the roles apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2w_runtime.actions import ACTION_SPACE_PROMPT
from p2w_runtime.retrieval import SearchHit

PLANNER_MARKER = "You are the PLANNER"
GENERATOR_MARKER = "You are the GENERATOR"
PRE_EXECUTION_MARKER = "You are the PRE-EXECUTION PLANNER"
REWRITER_MARKER = "You are the TASK REWRITER"

_FORMAT = "Reply in this format:\nThought: <your reasoning for this step>\nAction: ```<one action>```"

_HISTORY_ON_DEMAND = (
    "History access is enabled: memory_access [query] asks the user's browsing history (purchases, visits, searches, "
    "bookings, reviews) whenever the task depends on the user's habits or preferences; it costs one step."
)
_HISTORY_OFF = "History access is disabled: do not use memory_access."


def planner_system(scheme: str) -> str:
    history = _HISTORY_ON_DEMAND if scheme == "on-demand" else _HISTORY_OFF
    return (
        f"{PLANNER_MARKER} of a personalized web agent acting for one user in a web browser.\n"
        f"Each step you see the task, the page's accessibility tree and what happened so far, and you choose one "
        f"action.\n{history}\n\n{ACTION_SPACE_PROMPT}\n\n{_FORMAT}"
    )


@dataclass(frozen=True, slots=True)
class StepRecord:
    """What the planner is reminded of about an earlier step."""

    step: int
    thought: str
    action: str
    result: str


def page_text(url: str, title: str, tabs: Sequence[str], ax_text: str) -> str:
    """The observation as the planner reads it: where it is, then the numbered accessibility tree."""
    return f"URL: {url}\nTITLE: {title}\nTABS: {' | '.join(tabs)}\n{ax_text}"


def planner_user(
    task: str,
    observation: str,
    step: int,
    history: Sequence[StepRecord],
    memory: Sequence[tuple[str, str]],
    notes: Sequence[str],
) -> str:
    parts = [f"TASK: {task}"]
    if memory:
        parts.append("WHAT THE USER'S HISTORY SAYS:\n" + "\n".join(f"- Q: {q}\n  A: {a}" for q, a in memory))
    if notes:
        parts.append("NOTES:\n" + "\n".join(f"- {n}" for n in notes))
    if history:
        parts.append(
            "PREVIOUS STEPS:\n"
            + "\n".join(
                f"{h.step}. {h.action} -> {h.result}" + (f" ({h.thought})" if h.thought else "") for h in history
            )
        )
    parts.append(f"CURRENT PAGE (step {step}):\n{observation}")
    return "\n\n".join(parts)


def generator_messages(question: str, hits: Sequence[SearchHit]) -> list[dict[str, str]]:
    entries = "\n".join(
        f"[{h.entry_id}] {h.entry.timestamp} | {h.entry.type}: {h.entry.object} | {h.entry.website}" for h in hits
    )
    system = (
        f"{GENERATOR_MARKER} of a personalized web agent's memory. Answer the planner's question about the user "
        "using ONLY the history entries given; infer habits from repeated behaviour; if the entries do not answer it, "
        "say so. Cite the entry ids you used.\nReply in exactly this format:\nAnswer: <answer>\nCited: <ids, comma "
        "separated, or none>"
    )
    user = f"QUESTION: {question}\n\nHISTORY ENTRIES:\n{entries or '(no entry matched)'}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def pre_execution_messages(task: str, max_queries: int) -> list[dict[str, str]]:
    system = (
        f"{PRE_EXECUTION_MARKER} of a personalized web agent. Before browsing, decide whether the task depends on "
        f"the user's habits or preferences (website, sizes, budgets, ratings, locations...). If it does, write up to "
        f"{max_queries} short questions to ask the user's browsing history.\nReply in exactly this format:\n"
        "Queries:\n- <question>\n- <question>\n(or `Queries: none` when the task is explicit)"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": f"TASK: {task}"}]


def rewrite_messages(task: str, memory: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    system = (
        f"{REWRITER_MARKER} of a personalized web agent. Rewrite the task so it is explicit, using what the user's "
        "history says (website, preferences, location). Keep everything the task asks.\nReply in exactly this "
        "format:\nTask: <rewritten task>"
    )
    found = "\n".join(f"- Q: {q}\n  A: {a}" for q, a in memory)
    return [{"role": "system", "content": system}, {"role": "user", "content": f"TASK: {task}\n\nHISTORY:\n{found}"}]
