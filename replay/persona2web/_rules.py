"""The deterministic judges: Persona2Web's rubric computed from the structured events, and its two baselines.

Every point awarded or withheld carries evidence: the event ids and the matched text,
or a note saying what was searched and not found.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import Judge, JudgeContext, Scorecard
from p2w_rt.replay.matching import TextSet, ValueMatch, mentions_site, on_site
from p2w_rt.replay.persona2web._candidates import (
    Candidate,
    action_view_candidates,
    applied_candidates,
    memory_candidates,
    outcome_view_candidates,
)
from p2w_rt.replay.persona2web._goal import goal_of
from p2w_rt.replay.persona2web._intent import intent_points
from p2w_rt.replay.persona2web._pages import RecordedPages, fetch_pages
from p2w_rt.replay.persona2web._sites import SiteConfig, site_fields
from p2w_rt.replay.persona2web._targets import (
    PREF_POINTS,
    WEB_POINTS,
    RubricTargets,
    rubric_metrics,
    rubric_targets,
)
from p2w_rt.schemas import Evidence
from p2w_runtime.domain.trajectory import Trajectory


def _found(value_desc: str, c: Candidate, snippet: str, extra: str = "") -> Evidence:
    return Evidence(event_ids=[c.event_id], text=snippet, note=f"{value_desc} found in {c.where}{extra}")


def _missing(value_desc: str, searched: str, n: int) -> Evidence:
    return Evidence(note=f"{value_desc} not found in {n} {searched}")


class Searched:
    """Candidates with their texts prepared once, searched for every value of an episode."""

    def __init__(self, candidates: Sequence[Candidate], what: str) -> None:
        self.candidates = list(candidates)
        self.texts = TextSet([c.text for c in self.candidates])
        self.what = what


def value_points(
    verdict: Scorecard, key: str, values: Sequence[str], searched: Searched, desc: str, *, bounded: bool = False
) -> bool:
    """Award PREF_POINTS at ``key`` if any of ``values`` is found (the earliest candidate wins); evidence either way.

    ``bounded``: the texts are what the agent applied, where a number within the value's limit meets it."""
    best: tuple[int, ValueMatch] | None = None
    for value in values:
        found = searched.texts.first(value, bounded=bounded)
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    if best is None:
        verdict.award(key, 0.0, PREF_POINTS, _missing(desc, searched.what, len(searched.candidates)))
        return False
    c, match = searched.candidates[best[0]], best[1]
    verdict.award(key, PREF_POINTS, PREF_POINTS, _found(desc, c, match.snippet, f" (score {match.score})"))
    return True


def web_retrieval(verdict: Scorecard, targets: RubricTargets, memory: Sequence[Candidate]) -> None:
    desc = f"website {' / '.join(targets.websites)}"
    for c in memory:
        mention = mentions_site(c.text, targets.hosts)
        if mention is not None:
            how = " (by name)" if mention.by_name else ""
            verdict.award("web.retrieval", WEB_POINTS, WEB_POINTS, _found(desc, c, mention.snippet, how))
            return
    verdict.award("web.retrieval", 0.0, WEB_POINTS, _missing(desc, "retrieved entries and memory answers", len(memory)))


def web_utilization(verdict: Scorecard, targets: RubricTargets, urls: Sequence[tuple[str, str]]) -> bool:
    desc = f"website {' / '.join(targets.websites)}"
    for event_id, url in urls:
        if on_site(url, targets.hosts):
            verdict.award(
                "web.utilization",
                WEB_POINTS,
                WEB_POINTS,
                Evidence(event_ids=[event_id], text=url, note=f"agent was on {desc}"),
            )
            return True
    verdict.award("web.utilization", 0.0, WEB_POINTS, _missing(desc, "page URLs", len(urls)))
    return False


def _preference_points(
    verdict: Scorecard, targets: RubricTargets, applied: Sequence[Candidate], memory: Sequence[Candidate] | None
) -> None:
    """Retrieval (when ``memory`` is given) and utilization points for each preference and the location."""
    applied_texts = Searched(applied, "action arguments, URLs, reasoning or answer")
    memory_texts = Searched(memory, "retrieved entries and memory answers") if memory is not None else None
    items: list[tuple[str, Sequence[str], str]] = [
        (f"pref.{i}", [value], f"preference {value!r}") for i, value in enumerate(targets.preferences, 1)
    ]
    if targets.location is not None:
        items.append(("location", targets.location_values, f"location {targets.location.raw!r}"))
    for key, values, desc in items:
        if memory_texts is not None:
            value_points(verdict, f"{key}.retrieval", values, memory_texts, desc)
        value_points(verdict, f"{key}.utilization", values, applied_texts, desc, bounded=True)


class _RulesJudge(Judge[SiteConfig]):
    uses_llm = False

    def configure(self, settings: PassSettings) -> SiteConfig:
        return SiteConfig.model_validate(site_fields(settings))

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        pages = await fetch_pages(trajectory, goal_of(trajectory.query), ctx.get_blob)
        return self.score(trajectory, pages)

    @abstractmethod
    def score(self, t: Trajectory, pages: RecordedPages | None = None) -> Scorecard:
        """Synchronous: the AX trees intent reads are fetched before (``fetch_pages``); without them
        intent is decided from URLs, titles and action text, as for an imported run."""

    def _finish(self, verdict: Scorecard) -> Scorecard:
        verdict.metrics = rubric_metrics(verdict.points, verdict.max_points)
        return verdict


class RubricRulesJudge(_RulesJudge):
    id = "rubric-rules"
    version = "5"
    description = "Persona2Web rubric (P_web, P_pref with location, Intent, SR) from the structured events, no LLM"

    def score(self, t: Trajectory, pages: RecordedPages | None = None) -> Scorecard:
        targets = rubric_targets(t, self.config)
        memory = list(memory_candidates(t))
        verdict = Scorecard()
        web_retrieval(verdict, targets, memory)
        reached = web_utilization(verdict, targets, t.urls)
        _preference_points(verdict, targets, list(applied_candidates(t, targets.values)), memory)
        intent_points(verdict, t, targets, pages or RecordedPages(), "full", reached)
        return self._finish(verdict)


class ActionWiseRulesJudge(_RulesJudge):
    id = "action-wise-rules"
    version = "5"
    description = (
        "Action-wise baseline: utilization and intent from the actions of all steps (no history, no reasoning)"
    )

    def score(self, t: Trajectory, pages: RecordedPages | None = None) -> Scorecard:
        targets = rubric_targets(t, self.config)
        verdict = Scorecard()
        reached = web_utilization(verdict, targets, t.urls)
        _preference_points(verdict, targets, list(action_view_candidates(t)), None)
        intent_points(verdict, t, targets, pages or RecordedPages(), "actions", reached)
        return self._finish(verdict)


class OutcomeBasedRulesJudge(_RulesJudge):
    id = "outcome-based-rules"
    version = "5"
    description = "Outcome-based baseline: utilization and intent from the final action, its reasoning and final page"

    def score(self, t: Trajectory, pages: RecordedPages | None = None) -> Scorecard:
        targets = rubric_targets(t, self.config)
        verdict = Scorecard()
        reached = web_utilization(verdict, targets, t.urls[-1:])
        _preference_points(verdict, targets, list(outcome_view_candidates(t, targets.values)), None)
        intent_points(verdict, t, targets, pages or RecordedPages(), "outcome", reached)
        return self._finish(verdict)
