"""`p2w-rt rerun`: today's agent code re-executed over a recorded run, without browser or LLM.

Each counted episode runs through the same ``Episode`` loop that recorded it, with the recording as its
environment (``RecordedEnvironment``) and its LLM (``RecordedLlm``), into a scratch store; the decisions
it makes there are compared with the recorded ones. Nothing is appended to the source run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from p2w_runtime.agent import AGENT_NAME, ROLE_PARAMS, AgentConfig, Episode
from p2w_runtime.command_line import command_line
from p2w_runtime.domain import EpisodeRef, RunInfo, check_task_ids, episodes_of, find_run, run_banks, under
from p2w_runtime.errors import UserError
from p2w_runtime.integrations.browser_use import AGENT as BROWSER_USE
from p2w_runtime.rerun._compare import first_mismatch
from p2w_runtime.rerun._environment import RecordedEnvironment
from p2w_runtime.rerun._llm import RecordedLlm
from p2w_runtime.rerun._mismatch import Divergence, ReplayedEpisode
from p2w_runtime.rerun._record_as import check_copy_label, record_as
from p2w_runtime.rerun._recorded import RecordedEpisode, load_episode
from p2w_runtime.rerun._retrieval import RecordedRetriever
from p2w_runtime.retrieval import HistoryRetriever, load_embedder
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore, open_store


@dataclass(frozen=True)
class RerunOptions:
    """The options of ``rerun RUN``, given to the rerun of the agent integration that recorded RUN
    (``p2w_runtime.integrations.rerun_recorded``), which refuses those it does not re-execute."""

    task_ids: tuple[str, ...] = ()
    history_dir: Path | None = None
    """The memory banks to retrieve from; default: the ones the run carries."""
    other_dataset: bool = False
    """Use ``history_dir`` even though its banks differ from the run's."""
    recorded_retrieval: bool = False
    """Serve every history query from its recorded ``history.retrieval`` instead of searching again."""
    record_as: str | None = None
    cache_dir: Path | None = None


@dataclass(frozen=True, slots=True)
class EpisodeRerun(ReplayedEpisode):
    source: RecordedEpisode
    rerun: RecordedEpisode
    """The re-executed episode as it was written to the scratch store."""


@dataclass
class RerunReport:
    run: RunInfo
    episodes: list[EpisodeRerun] = field(default_factory=list)
    seconds: float = 0.0
    recorded_run_id: str | None = None
    """The run ``--record-as`` wrote."""

    @property
    def identical(self) -> bool:
        return all(e.identical for e in self.episodes)


Progress = Callable[[EpisodeRerun], None]


async def rerun(
    store: EventStore, run_ref: str, options: RerunOptions, progress: Progress | None = None
) -> RerunReport:
    """Re-execute the counted episodes of ``run_ref`` (or of ``options.task_ids``); user errors come first."""
    run = await recorded_run(store, run_ref, "rerun")
    refs = select_episodes(run, await episodes_of(store, run.run_id), options.task_ids)
    config = agent_config(run)
    if options.record_as:  # its copies take the tasks' ids in a run of their own
        check_task_ids((ref.task_id for ref in refs), f"run {options.record_as!r}")
        await check_copy_label(store, run, options.record_as)
    retriever = None
    if config.scheme != "no-history" and not options.recorded_retrieval:
        retriever = await history_retriever(
            store, run, options.history_dir, options.cache_dir, other_dataset=options.other_dataset
        )
    report = RerunReport(run)
    started = time.perf_counter()
    if retriever is not None:
        await asyncio.to_thread(retriever.embedder.prepare_queries, await recorded_queries(store, refs))
    with scratch_folder("rerun") as tmp:
        async with (
            open_store(tmp / "rerun.db") as scratch,
            RecordedLlm(run.started.backbone_model, ROLE_PARAMS) as llm,
        ):
            for ref in refs:
                result = await rerun_episode(store, scratch, llm, run, ref, config, retriever, options)
                report.episodes.append(result)
                if progress is not None:
                    progress(result)
            report.seconds = time.perf_counter() - started
            if options.record_as:
                pairs = [(e.source, e.rerun) for e in report.episodes]
                report.recorded_run_id = await record_as(
                    store,
                    scratch,
                    run,
                    pairs,
                    options.record_as,
                    history_dir=options.history_dir,
                    other_dataset=options.other_dataset,
                )
    return report


async def rerun_episode(
    store: EventStore,
    scratch: EventStore,
    llm: RecordedLlm,
    run: RunInfo,
    ref: EpisodeRef,
    config: AgentConfig,
    retriever: HistoryRetriever | None,
    options: RerunOptions,
) -> EpisodeRerun:
    source = await load_episode(store, ref.stream)
    divergence = Divergence()
    if options.recorded_retrieval and config.scheme != "no-history":
        retriever = RecordedRetriever(source, divergence)
    episode = Episode(
        source.task(),
        run_id=run.run_id,
        episode_id=source.episode_id,
        store=scratch,
        browser=RecordedEnvironment(source, store, divergence, media=options.record_as is not None),
        llm=llm.replaying(source, divergence),
        retriever=retriever,
        config=config,
    )
    await episode.run()
    again = await load_episode(scratch, episode.stream)
    mismatch = first_mismatch(source.events, again.events, divergence.first, own_agent=True)
    return EpisodeRerun(ref.stream, ref.task_id, mismatch, source, again)


async def recorded_queries(store: EventStore, refs: list[EpisodeRef]) -> list[str]:
    """The history queries the episodes asked when recorded: today's code asks the same ones unless it changed, so
    the rerun encodes them in one batch before it starts (a query it asks anew is encoded when asked)."""
    streams = {ref.stream for ref in refs}
    queries: list[str] = []
    for run_id in {ref.run_id for ref in refs}:
        async for stored in store.read_all(stream_prefix=under(run_id), types=["history.query"]):
            if stored.stream in streams and isinstance(query := stored.payload.get("query"), str):
                queries.append(query)
    return queries


def agent_config(run: RunInfo) -> AgentConfig:
    """The agent settings the run was recorded with (``run.started.config``)."""
    return AgentConfig.recorded(run.started.config) or AgentConfig()


async def recorded_run(store: EventStore, run_ref: str, verb: str, *, own_agent: bool = True) -> RunInfo:
    """The run ``run_ref``; imported runs are refused, having no recorded LLM calls to answer the agent, and so
    (``own_agent``) are runs another agent recorded: only the agent that recorded a run re-executes it."""
    run = await find_run(store, run_ref)
    if run.started.source != "recorded":
        raise UserError(
            f"run {run.label!r} was imported ({run.started.import_format or 'unknown format'}), not recorded: "
            f"it has no recorded LLM calls to {verb} against"
        )
    if own_agent and run.started.agent != AGENT_NAME:
        raise UserError(recorded_by(run, verb))
    return run


def recorded_by(run: RunInfo, verb: str) -> str:
    """One line: which agent recorded ``run`` and how to re-execute it, since p2w-rt's agent would be the wrong one.

    Browser-Use is re-executed by ``rerun RUN`` itself (in process, docs/design/replay.md); ``fork`` does not
    continue it."""
    if run.started.agent == BROWSER_USE:
        again = command_line("rerun", run.label)
        return (
            f"run {run.label!r} was recorded by agent 'browser-use' (record --agent browser-use), not by p2w-rt's "
            f"agent, which {verb} would run: {again} re-executes Browser-Use from its recording; "
            "a fork of it is not supported"
        )
    if verb == "fork":
        again = command_line(verb, run.label, "TASK", options=("--at-step", "K", "--exec", "CMD"))
    else:
        again = command_line(verb, run.label, options=("--exec", "CMD"))
    return (
        f"run {run.label!r} was recorded by agent {run.started.agent!r}, not by p2w-rt's agent, which {verb} would "
        f"run: only the agent that recorded a run re-executes it, with {again} "
        "(CMD: the command that starts that agent)"
    )


def select_episodes(run: RunInfo, refs: list[EpisodeRef], task_ids: tuple[str, ...]) -> list[EpisodeRef]:
    """The counted episodes of ``task_ids`` (each once, in the order named), or all of them; a run with none to
    re-execute is refused rather than reported identical."""
    if not task_ids:
        if not refs:
            raise UserError(f"run {run.label!r} has no finished episode to re-execute")
        return refs
    by_task = {ref.task_id: ref for ref in refs}
    named = list(dict.fromkeys(task_ids))
    missing = [t for t in named if t not in by_task]
    if missing:
        raise UserError(f"run {run.label!r} has no counted episode for task {', '.join(missing)}")
    return [by_task[t] for t in named]


async def history_retriever(
    store: EventStore, run: RunInfo, history_dir: Path | None, cache_dir: Path | None, *, other_dataset: bool = False
) -> HistoryRetriever:
    """The retriever the run was recorded with: the memory banks it carries (or ``history_dir``, checked to hold
    the same unless ``other_dataset``) and its embedder."""
    banks = await run_banks(store, run, history_dir, other_dataset=other_dataset)
    name = run.started.config.embedder
    embedder = await asyncio.to_thread(load_embedder, None if name == "default" else name)
    return HistoryRetriever(banks, embedder, cache_dir)
