"""`p2w-rt fork RUN TASK --at-step K`: branch a recorded episode at step K and continue it live.

The browser is restored first, on a fresh context, by re-playing the recorded browser actions of steps < K and
checking that each step's recorded page is reached; a page that is not ends the fork with the step named,
before anything is written. With ``--restore har`` (the default when the source kept a HAR with bodies) the
context is routed from that HAR meanwhile, so the prefix pages are the recorded ones (``_har``). Then the
agent's own loop runs from step 1 with ``ForkTab`` and ``ForkLlm``: the recording answers steps < K (rebuilding
the agent's state), the browser and the chosen model the rest. The new episode is the only one of a new run;
its ``episode.started`` names the source (``fork``) and is caused by the source's observation of step K. The same
fork given again after one was stopped completes the run it left unfinished (``_fork_run``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from p2w_rt.schemas import ForkPoint, ParsedAction, Scheme
from p2w_runtime.actions import BROWSER_ACTIONS
from p2w_runtime.agent import ROLE_PARAMS, Episode, EpisodeOutcome, SiteHosting, hosted_browser
from p2w_runtime.browser import EpisodeBrowser, EpisodeSettings
from p2w_runtime.domain import check_task_id, derived_dataset, derived_spec, episodes_of, resume_run, start_run
from p2w_runtime.errors import UserError
from p2w_runtime.llm import PriceTable, RetryPolicy, UsageTotals
from p2w_runtime.rerun._fork_run import ForkTarget, close_ended, holding_fork, next_episode_id
from p2w_runtime.rerun._fork_seams import ForkEnvironment, ForkGate, ForkLlm, ForkTab
from p2w_runtime.rerun._har import Restore, choose_restore, recorded_har, routed_from_har
from p2w_runtime.rerun._mismatch import Divergence
from p2w_runtime.rerun._recorded import RecordedEpisode, load_episode, parsed_action
from p2w_runtime.rerun._rerun import agent_config, history_retriever, recorded_run, select_episodes
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore


@dataclass(frozen=True)
class ForkRequest:
    run_ref: str
    task_id: str
    at_step: int
    model: str | None = None
    """Default: the source run's model."""
    scheme: Scheme | None = None
    label: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    chromium: str | None = None
    history_dir: Path | None = None
    other_dataset: bool = False
    """Fork with ``history_dir`` although its banks differ from the source run's (recorded in the fork's config)."""
    cache_dir: Path | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    llm_timeout_s: float = 120.0
    restore: Restore | None = None
    """How the browser reaches step K; default: ``har`` when the source kept a HAR with bodies."""


@dataclass(frozen=True)
class ForkSummary:
    run_id: str
    label: str
    source_stream: str
    at_step: int
    restore: Restore
    outcome: EpisodeOutcome
    """Its ``tokens`` and ``cost_usd`` count only what the fork spent: the served prefix is ``served_tokens``."""
    served_tokens: int = 0
    last_step: int = 0
    """The last step the episode observed, the one an error ended: ``outcome.steps`` counts only those before it."""
    went_live: bool = False
    """Whether the episode got past the source's steps to ``at_step``, the first live one."""
    left: Literal["new", "forked again", "closed"] = "new"
    """The run: new, or one the same fork left unfinished, its episode forked again or, as it had ended, only closed
    (``outcome`` is then the recorded one's, with nothing spent)."""
    aborted: int = 0
    """The half episodes of such a run closed as ``aborted``."""

    @property
    def replayed_steps(self) -> int:
        """The source's steps the episode went through, answered from the recording."""
        return self.at_step - 1 if self.went_live else max(0, self.last_step - 1)


async def fork(store: EventStore, request: ForkRequest, hosting: SiteHosting | None = None) -> ForkSummary:
    """Fork ``request``'s episode into a new run; ``hosting`` serves sites the open web lacks (the demo sites)."""
    run = await recorded_run(store, request.run_ref, "fork")
    (ref,) = select_episodes(run, await episodes_of(store, run.run_id), (request.task_id,))
    source = await load_episode(store, ref.stream)
    last = max(source.observations, default=0)
    if not 1 <= request.at_step <= last:
        raise UserError(
            f"episode {ref.stream} observed steps 1..{last}; --at-step {request.at_step} is not one of them"
        )
    har = await recorded_har(store, source)
    restore_by = choose_restore(request.restore, har, ref.stream)
    config = agent_config(run)
    config = replace(config, scheme=request.scheme or config.scheme)
    asked = sorted({q.step for q in source.queries() if q.step is not None and q.step < request.at_step})
    if config.scheme == "no-history" and asked:
        raise UserError(
            f"episode {ref.stream} asked the history at step {asked[0]}, before step {request.at_step}: "
            "a no-history fork cannot re-play that; fork at an earlier step"
        )
    label = request.label or f"{run.label}-{request.task_id}-at-{request.at_step}"
    check_task_id(ref.task_id, f"run {label!r}")  # a source recorded before such ids were refused
    model = request.model or run.started.backbone_model
    target = ForkTarget(label, ref.stream, request.at_step, model, config.scheme)
    async with holding_fork(store, target) as left:
        if left is not None and (ended := await close_ended(store, left)) is not None:
            return ForkSummary(left.run_id, label, ref.stream, request.at_step, restore_by, ended, left="closed")
        retriever = None
        if config.scheme != "no-history":
            retriever = await history_retriever(
                store, run, request.history_dir, request.cache_dir, other_dataset=request.other_dataset
            )
        carried = await derived_dataset(store, run, request.history_dir)
        gate, divergence = ForkGate(request.at_step), Divergence()
        llm = ForkLlm(
            model,
            source=source,
            source_model=run.started.backbone_model,
            gate=gate,
            divergence=divergence,
            base_url=request.base_url,
            api_key=request.api_key,
            role_params=ROLE_PARAMS,
            retry=request.retry,
            timeout_s=request.llm_timeout_s,
            prices=PriceTable.default(),
        )
        task = source.task()
        settings = EpisodeSettings(
            max_chars=config.observation_chars,
            navigation_timeout_s=config.page_timeout_s,
            har_content="embed" if config.har_bodies else "omit",
        )
        async with llm, hosted_browser([task], request.chromium, hosting) as browser:
            with scratch_folder("fork") as tmp:
                live = await browser.new_context(har_path=tmp / "episode.har", settings=settings)
                try:
                    await restore(live, source, request.at_step, har if restore_by == "har" else None)
                except BaseException:
                    await live.close()
                    raise
                spec = derived_spec(
                    run.started,
                    label,
                    model=llm.live_model,
                    scheme=config.scheme,
                    config={**config.as_dict(), **target.config()},
                    other_dataset=request.other_dataset,
                    carried=carried,
                    embedder=retriever.embedder.ref if retriever is not None else run.started.embedder,
                )
                forked = await start_run(store, spec) if left is None else await resume_run(store, left.run_id)
                at = source.observations[request.at_step].event_id if request.at_step in source.observations else None
                tab = ForkTab(live, source, store, gate, divergence)
                episode = Episode(
                    task,
                    run_id=forked.run_id,
                    episode_id=next_episode_id(forked, source.episode_id, task.task_id),
                    store=store,
                    browser=ForkEnvironment(tab),
                    llm=llm,
                    retriever=retriever,
                    config=config,
                    fork=ForkPoint(source_stream=ref.stream, at_step=request.at_step, source_event_id=at),
                )
                try:
                    outcome = await episode.run()
                except asyncio.CancelledError:  # Ctrl-C: the episode closed itself as aborted
                    await forked.close(interrupted=True)
                    raise
        outcome = _spent(outcome, llm.served)
        await forked.close(cost_usd=outcome.cost_usd)
    served = llm.served.total_tokens
    return ForkSummary(
        forked.run_id,
        label,
        ref.stream,
        request.at_step,
        restore_by,
        outcome,
        served,
        tab.recorded.step,
        gate.live,
        left="new" if left is None else "forked again",
        aborted=forked.aborted,
    )


def _spent(outcome: EpisodeOutcome, served: UsageTotals) -> EpisodeOutcome:
    """The outcome's totals without the recorded answers served for the steps before K (nothing was spent on them)."""
    cost = outcome.cost_usd
    if cost is not None:
        cost = max(0.0, cost - served.priced_cost_usd)
    return replace(outcome, tokens=outcome.tokens - served.total_tokens, cost_usd=cost)


async def restore(tab: EpisodeBrowser, source: RecordedEpisode, at_step: int, har: bytes | None = None) -> None:
    """Bring a fresh tab to the page of step ``at_step`` by re-playing the recorded browser actions before it,
    with its requests served from ``har`` (the source's recorded HAR) when given."""
    if har is None:
        await _replay_prefix(tab, source, at_step, f"cannot fork {source.stream} at step {at_step}")
        return
    async with routed_from_har(tab, har):
        await _replay_prefix(tab, source, at_step, f"cannot fork {source.stream} at step {at_step} from its HAR")


async def _replay_prefix(tab: EpisodeBrowser, source: RecordedEpisode, at_step: int, where: str) -> None:
    opened = await tab.execute(ParsedAction(name="goto", args=[source.start_url]))
    if opened.error:
        raise UserError(f"{where}: the start page {source.start_url} did not load: {opened.error}")
    for step in range(1, at_step + 1):
        recorded = source.observations.get(step)
        seen = await tab.observe()
        if recorded is None or seen.url != recorded.url:
            expected = recorded.url if recorded else "(no observation recorded)"
            raise UserError(
                f"{where}: step {step}'s recorded page {expected} was not reached (the browser is on {seen.url})"
            )
        action = source.actions.get(step)
        if step == at_step or action is None or action.parsed is None or action.status != "executed":
            continue
        if action.parsed.name in BROWSER_ACTIONS:
            result = await tab.execute(parsed_action(action.parsed))
            if result.status != "executed":
                raise UserError(f"{where}: step {step}'s recorded action {action.raw} failed again: {result.error}")
