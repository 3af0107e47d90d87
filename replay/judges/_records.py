"""Judgments in the store: one ``{run_id}/judgments`` stream per run, read back as records.

Judgments never go to an episode's own stream, so judging never changes the episode's last
hash, which is the trajectory hash the judgments are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.replay.derived import DerivedRecord, DerivedStream
from p2w_rt.schemas import Judgment
from p2w_runtime.domain import JUDGMENTS_SUFFIX, run_of
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class JudgmentRecord(DerivedRecord[Judgment]):
    kind = "judge"

    @property
    def judgment(self) -> Judgment:
        return self.payload


JUDGMENTS = DerivedStream(JUDGMENTS_SUFFIX, "judgment", Judgment, JudgmentRecord)
judgment_stream = JUDGMENTS.name
read_judgments = JUDGMENTS.read
"""Every judgment of a run, oldest first (older judgments stay; nothing is overwritten)."""


async def episode_judgments(store: EventStore, episode_stream: str) -> list[JudgmentRecord]:
    """Every judgment of one episode, oldest first (what ``p2w-rt show RUN TASK`` lists)."""
    run_id = run_of(episode_stream)
    return [r for r in await read_judgments(store, run_id) if r.judgment.episode_stream == episode_stream]


async def current_judgments(
    store: EventStore, run_id: str, judge_id: str | None = None
) -> dict[tuple[str, str], JudgmentRecord]:
    """The latest successful judgment per (episode stream, judge) that judged the episode as it is now."""
    current = await JUDGMENTS.current(store, run_id)
    return current if judge_id is None else {key: r for key, r in current.items() if key[1] == judge_id}
