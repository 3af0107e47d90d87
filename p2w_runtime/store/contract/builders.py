"""Events and blobs the contract tests build, shared by every part of the contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TypeVar

from p2w_rt.schemas import NewEvent, Observation, Rationale, RunStarted


def observation(stream: str, step: int, *, ax_tree: str | None = None, causation_id: str | None = None) -> NewEvent:
    return NewEvent(
        stream=stream,
        causation_id=causation_id,
        payload=Observation(step=step, url=f"http://127.0.0.1/{stream}/{step}", title=f"page {step}", ax_tree=ax_tree),
    )


def rationale(stream: str, step: int, text: str = "why") -> NewEvent:
    return NewEvent(stream=stream, payload=Rationale(step=step, source="planner", text=text))


def page_text(n: int) -> bytes:
    """A compressible, distinct blob (an AX tree dump, say)."""
    return "".join(f"[{i}] link 'item {n}-{i}' focused: False\n" for i in range(400)).encode()


_T = TypeVar("_T")


async def collect(events: AsyncIterator[_T]) -> list[_T]:
    return [e async for e in events]


def run_started(run_id: str, label: str, *, agent: str = "a", model: str = "m") -> NewEvent:
    """A run's first event: what takes its label."""
    payload = RunStarted(
        run_id=run_id,
        label=label,
        agent=agent,
        backbone_model=model,
        scheme="on-demand",
        dataset_id="contract",
        dataset_hash="0" * 64,
        code_version="contract",
    )
    return NewEvent(stream=run_id, payload=payload)
