"""Imported runs scored by the ``rubric-rules`` judge directly, with the demo's location sites: the intent tests."""

from __future__ import annotations

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeContext, Scorecard
from p2w_rt.replay.persona2web import RubricRulesJudge, SiteSettings, default_location_sites
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.store import EventStore

SETTINGS = PassSettings(plugins=(SiteSettings(location_sites=tuple(default_location_sites())),))


async def judged(store: EventStore, runs: list) -> dict[str, Scorecard]:
    """Each episode of the imported ``runs``' scorecard, by task."""
    out = {}
    for run in runs:
        for ref in await episodes_of(store, run.run_id):
            t = await load_trajectory(store, ref.stream)
            out[t.task_id] = await RubricRulesJudge(SETTINGS).judge(t, JudgeContext(get_blob=store.get_blob))
    return out
