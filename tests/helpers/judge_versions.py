"""Judgments as another release of a judge wrote them: the same judge id at another version, appended to a run's
judgment stream as that release's ``p2w-rt replay`` would have, for the tests of which version a table scores with."""

from __future__ import annotations

from collections.abc import Sequence

from p2w_rt.replay.judges import judgment_stream
from p2w_rt.schemas import Judgment, NewEvent
from p2w_runtime.domain import episodes_of
from p2w_runtime.store import EventStore

FIGURES = ("p_web", "p_pref", "p_avg", "intent", "success")


async def judged_at(
    store: EventStore,
    run_id: str,
    task_id: str,
    version: str,
    value: float,
    judge_id: str = "rubric-rules",
    figures: Sequence[str] = FIGURES,
) -> None:
    """Append ``judge_id``'s judgment at ``version`` of the run's counted episode of ``task_id`` as it is now, every
    one of ``figures`` ``value``."""
    (ref,) = [ref for ref in await episodes_of(store, run_id) if ref.task_id == task_id]
    judgment = Judgment(
        episode_stream=ref.stream,
        task_id=task_id,
        trajectory_hash=ref.hash,
        judge_id=judge_id,
        judge_version=version,
        config_hash=f"{judge_id}-{version}",
        metrics=dict.fromkeys(figures, value),
    )
    await store.append([NewEvent(stream=judgment_stream(run_id), payload=judgment)])
