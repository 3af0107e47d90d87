"""A run as diff and stats need it: per episode, the judged figures and the gist of what it did.

Figures come from the latest successful judgment of the episode as it is now (trajectory hash
unchanged) by one judge, at the one version every compared run is scored with
(``replay.metrics.compared_scores``). Comparisons are read-only (the runs may sit in an archive, or in another
user's file): an episode without one is judged in memory when the judge needs no LLM, and nothing is
appended; an LLM judge's judgments must exist already (``p2w-rt replay``), since a diff should not
spend tokens behind the user's back, and the error names the episodes that lack them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from p2w_rt.replay.derived import PassSettings, family
from p2w_rt.replay.matching import host_of
from p2w_rt.replay.metrics import EPISODE_KEYS, Compared, compared_scores, episode_figures, judge_label
from p2w_rt.schemas import ForkPoint
from p2w_runtime.command_line import command_line
from p2w_runtime.domain import RunInfo
from p2w_runtime.domain.trajectory import Trajectory, load_trajectories
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore

if TYPE_CHECKING:
    from p2w_rt.replay.judges import Judge

DEFAULT_JUDGE = "rubric-rules"


class MissingJudgments(UserError):
    """Episodes of the run have no judgment by the judge asked for, and that judge needs an LLM to make them."""


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
    fork: ForkPoint | None = None
    """Set when the episode was forked off another (``p2w-rt fork``): its steps before ``at_step`` are the source's."""

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
    judge_version: str | None = None

    @property
    def label(self) -> str:
        return self.info.label

    @property
    def judge(self) -> str:
        """The judge and the version its figures are from: ``rubric-rules@5``."""
        return judge_label(self.judge_id, self.judge_version)


def episode_data(t: Trajectory, scores: dict[str, float] | None, run_scheme: str | None) -> EpisodeData:
    pages: dict[int, str] = {}
    for o in t.observations:
        pages.setdefault(o.step, o.url)
    actions = [
        StepAction(a.step, a.parsed.render() if a.parsed else a.raw.strip(), pages.get(a.step, "")) for a in t.actions
    ]
    websites = list(dict.fromkeys(h for _, url in t.urls if (h := host_of(url))))
    entry_ids = frozenset(hit.entry_id for access in t.history for hit in access.hits)
    scheme = t.scheme or run_scheme
    return EpisodeData(t.stream, t.task_id, t.level, scheme, scores, actions, websites, entry_ids, fork=t.fork)


async def _judge_in_memory(store: EventStore, judge: Judge[Any], t: Trajectory) -> dict[str, float] | None:
    """A rules judge's figures for an episode it has not judged yet, never appended (comparisons write nothing)."""
    from p2w_rt.replay.judges import JudgeContext, JudgeError  # with the judge, only when one judges

    try:
        verdict = await judge.judge(t, JudgeContext(get_blob=store.get_blob, llm=None))
    except JudgeError:
        return None
    return verdict.metrics if verdict.status == "ok" else None


def _scores(metrics: dict[str, float] | None) -> dict[str, float] | None:
    if metrics is None or not all(m in metrics for m in EPISODE_KEYS.values()):
        return None
    return episode_figures(metrics)


async def load_run_data(
    store: EventStore, info: RunInfo, judge_id: str = DEFAULT_JUDGE, source: str = "", compared: Compared | None = None
) -> RunData:
    """Judged figures and trajectory gist of every episode of a run; reads the store, never writes to it. Runs compared
    with each other pass their ``compared_scores``, so that all are scored with one version of the judge."""
    family("judge").check(judge_id)
    compared = compared or (await compared_scores([(store, info.run_id)], judge_id))[0]
    judge: Judge[Any] | None = None  # made for the first episode without a judgment: a run judged whole loads none
    episodes: list[EpisodeData] = []
    unjudged: list[str] = []
    try:
        async for t in load_trajectories(store, info.run_id):
            record = compared.record(t.stream, judge_id)
            metrics = record.judgment.metrics if record is not None else None
            if record is None:
                if judge is None:
                    from p2w_rt.replay.judges import make_judge

                    judge = make_judge(judge_id, PassSettings())
                if judge.uses_llm:
                    unjudged.append(t.task_id)
                else:
                    metrics = await _judge_in_memory(store, judge, t)
            episodes.append(episode_data(t, _scores(metrics), info.started.scheme))
    finally:
        if judge is not None:
            await judge.aclose()
    if unjudged and len(unjudged) == len(episodes):
        shown = ", ".join(unjudged[:5]) + (f" and {len(unjudged) - 5} more" if len(unjudged) > 5 else "")
        named = judge_label(judge_id, compared.version) if compared.judged else judge_id  # other versions judged it
        raise MissingJudgments(
            f"run {info.label!r} ({info.run_id}) has no {named} judgments for {shown}; "
            f"judge it first: {command_line('replay', info.label, options=('--judge', judge_id))}"
        )
    return RunData(info, source or info.label, judge_id, episodes, compared.version)
