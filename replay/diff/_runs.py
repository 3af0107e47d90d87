"""A run as diff and stats need it: per episode, the judged figures and the gist of what it did.

Figures come from the latest successful judgment of the episode as it is now (trajectory hash
unchanged) by one judge. A run without them is judged first when the judge needs no LLM (cached,
appended like any replay); an LLM judge's judgments must exist already (``p2w-rt replay``), since
a diff should not spend tokens behind the user's back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2w_runtime.errors import UserError
from p2w_runtime.store import Recorder, RunInfo
from replay.judges import JudgeSettings, make_judge
from replay.judging import current_judgments, replay_run
from replay.matching import host_of
from replay.trajectory import Trajectory, load_trajectories

METRICS: tuple[str, ...] = ("p_web", "p_pref", "p_avg", "intent", "success_rate")
"""Run-level figures, 0..1; ``success_rate`` is the mean of the judgments' ``success``."""
EPISODE_METRICS: dict[str, str] = {
    "p_web": "p_web",
    "p_pref": "p_pref",
    "p_avg": "p_avg",
    "intent": "intent",
    "success_rate": "success",
}
DEFAULT_JUDGE = "rubric-rules"


class MissingJudgments(UserError):
    """The run has no judgments by the judge asked for, and that judge needs an LLM to make them."""


@dataclass(frozen=True, slots=True)
class StepAction:
    step: int
    action: str
    url: str


@dataclass(slots=True)
class EpisodeData:
    stream: str
    task_id: str
    level: int | None
    scheme: str | None
    scores: dict[str, float] | None
    """The five figures by ``METRICS`` name, None when the episode has no usable judgment."""
    actions: list[StepAction] = field(default_factory=list)
    websites: list[str] = field(default_factory=list)
    entry_ids: frozenset[int] = frozenset()

    @property
    def success(self) -> bool | None:
        return None if self.scores is None else self.scores["success_rate"] == 1.0


@dataclass(slots=True)
class RunData:
    info: RunInfo
    source: str
    """Where the run came from, for the report (``march.db:LABEL``)."""
    judge_id: str
    episodes: list[EpisodeData]

    @property
    def label(self) -> str:
        return self.info.label


def episode_data(t: Trajectory, scores: dict[str, float] | None, run_scheme: str | None) -> EpisodeData:
    pages: dict[int, str] = {}
    for o in t.observations:
        pages.setdefault(o.step, o.url)
    actions = [
        StepAction(a.step, a.parsed.render() if a.parsed else a.raw.strip(), pages.get(a.step, "")) for a in t.actions
    ]
    websites = list(dict.fromkeys(h for _, url in t.urls if (h := host_of(url))))
    entry_ids = frozenset(hit.entry_id for access in t.history for hit in access.hits)
    return EpisodeData(t.stream, t.task_id, t.level, t.scheme or run_scheme, scores, actions, websites, entry_ids)


async def _ensure_judged(store: Recorder, info: RunInfo, judge_id: str) -> None:
    judge = make_judge(judge_id, JudgeSettings())
    if judge.uses_llm:
        current = await current_judgments(store, info.run_id, judge_id)
        if not current and info.episodes:
            raise MissingJudgments(
                f"run {info.label!r} ({info.run_id}) has no {judge_id} judgments; "
                f"judge it first: p2w-rt replay {info.label} --judge {judge_id}"
            )
        return
    await replay_run(store, info.run_id, [judge])


async def load_run_data(store: Recorder, info: RunInfo, judge_id: str = DEFAULT_JUDGE, source: str = "") -> RunData:
    """Judged figures and trajectory gist of every episode of a run (judging it first with a rules judge)."""
    await _ensure_judged(store, info, judge_id)
    judged = await current_judgments(store, info.run_id, judge_id)
    episodes: list[EpisodeData] = []
    async for t in load_trajectories(store, info.run_id):
        record = judged.get((t.stream, judge_id))
        scores = None
        if record is not None and all(m in record.judgment.metrics for m in EPISODE_METRICS.values()):
            scores = {name: record.judgment.metrics[m] for name, m in EPISODE_METRICS.items()}
        episodes.append(episode_data(t, scores, info.started.scheme))
    return RunData(info, source or info.label, judge_id, episodes)
