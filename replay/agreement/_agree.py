"""The agreement report of the judges named on one run (``p2w-rt agree``): the raters chosen, then compared."""

from __future__ import annotations

from p2w_rt.replay.agreement._raters import (
    CLASSIFIER_PREFIX,
    classifier_raters,
    classifier_selectors,
    current_records,
    failed_judgments,
    human_selectors,
    labels_errors,
    rater,
)
from p2w_rt.replay.agreement._report import AgreementReport, agreement
from p2w_rt.replay.agreement._stats import BOOTSTRAP_SAMPLES
from p2w_rt.replay.metrics import nothing_to_judge
from p2w_runtime.domain import RunInfo, find_run
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore


async def agree(
    store: EventStore, run_ref: str, judges: tuple[str, ...], *, human: bool, samples: int = BOOTSTRAP_SAMPLES
) -> AgreementReport:
    """The agreement report of the named judges (``classify:ID`` names a classifier) on one run; with ``human``,
    every human annotator too, and, when they labelled error labels, every classifier that classified the run."""
    info = await find_run(store, run_ref)
    await _has_episodes(store, info)
    records = await current_records(store, info.run_id)
    selectors = list(dict.fromkeys(judges))
    if human:
        humans = human_selectors(records)
        if not humans:
            raise UserError(f"run {info.label} has no human labels (import them with p2w-rt import-labels FILE)")
        selectors += [h for h in humans if h not in selectors]
        if labels_errors(records):
            selectors += [c for c in await classifier_selectors(store, info.run_id) if c not in selectors]
    if not selectors:
        raise UserError("name a judge with --judge, or --human for the imported labels")
    judged = [s for s in selectors if not s.startswith(CLASSIFIER_PREFIX)]
    by_name = {r.name: r for r in await classifier_raters(store, info.run_id, selectors, info.label)}
    failed = [] if records else await failed_judgments(store, info.run_id)
    by_name.update((s, rater(s, records, info.label, failed)) for s in judged)
    raters = [by_name[s] for s in selectors]
    if len(raters) < 2 and not any(len(v) > 1 for r in raters for v in r.samples.values()):
        raise UserError(f"{raters[0].name} alone on run {info.label}: name a second --judge, or judge with --samples")
    return agreement(info.label, raters, samples=samples)


async def _has_episodes(store: EventStore, info: RunInfo) -> None:
    """A run without a finished episode has no judgment and nothing to judge: a hint to judge it would be false."""
    if what := await nothing_to_judge(store, info):
        raise UserError(f"{what}: nothing was judged and there is nothing to judge")
