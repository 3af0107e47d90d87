"""`rerun RUN` of a run recorded by ``record --agent browser-use``: Browser-Use re-executed in this process.

Each episode runs Browser-Use as ``record`` runs it (``record_episode``: the same settings, Chromium and demo
sites, live), under the recording API's replay mode: its model calls and history retrievals are answered by the
replay endpoint from the recording, and its would-be events are compared with the recorded ones, as ``rerun
--exec`` compares any agent's (docs/design/replay.md). Browser-Use's prompts change on every run where nothing
the agent decided did (the date, tab ids, element indices), so its requests are matched with those normalised on
both sides (``browser_use_volatile``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import openai
from playwright.async_api import async_playwright

from p2w_runtime.agent import SiteHosting
from p2w_runtime.browser import find_chromium
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import ActionRecord, EpisodeRecord
from p2w_runtime.exec._episode_replay import EpisodeReplay
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.exec._rerun_exec import REPLAY_KEY, ExecEpisode, ExecReport
from p2w_runtime.integrations.browser_use import AGENT, check_version, record_episode
from p2w_runtime.recording import REPLAY_ENV, open_run
from p2w_runtime.rerun import load_episode, recorded_run, select_episodes
from p2w_runtime.retrieval import HistoryRetriever
from p2w_runtime.store import EventStore, MemoryEventStore

_VOLATILE = (
    (re.compile(r"<browser_state>.*?</browser_state>", re.S), "<browser_state>(observed)</browser_state>"),
    (re.compile(r"Today:\d{4}-\d{2}-\d{2}"), "Today:(date)"),
    (re.compile(r"\b([Tt]ab:? )[0-9A-Fa-f]{4}\b"), r"\1(id)"),
)
"""What differs between two recordings of one Browser-Use task with the same model answers: its page (tab ids,
element indices) and the day. The page is the observation, which ``rerun`` does not compare; a tab id elsewhere
(a switch in the agent's history) is blanked too."""
_ELEMENT = re.compile(r"\[(\d+)\](<[^\n]*?/>)[^\n]*\n(?=([^\n]*))")
"""An element of Browser-Use's page text: ``[index]<tag attributes />`` and the line after it (its text, or the
next element, which is matched in turn)."""


class BrowserUseVolatile:
    """The volatile parts of Browser-Use's requests (``EpisodeReplay``'s ``Volatile``), for one episode.

    Its element indices are Chromium's backend node ids, which differ between runs of the same page, so a recorded
    answer naming ``{"click": {"index": 176}}`` is served naming the element with the same tag, attributes and text
    (and occurrence among those) on today's page, and the action it took is compared under the recorded index."""

    def __init__(self) -> None:
        self._recorded_index: dict[int, int] = {}
        """Today's index -> the recorded one, for the elements served answers named."""

    def messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return browser_use_volatile(messages)

    def answer(self, recorded: list[dict[str, Any]], now: list[dict[str, Any]], response: str) -> str:
        today = _same_elements(_text(recorded), _text(now))
        try:
            said = json.loads(response)
        except json.JSONDecodeError:
            return response
        if not isinstance(said, dict) or not isinstance(said.get("action"), list):
            return response
        for action in said["action"]:
            for params in action.values() if isinstance(action, dict) else ():
                index = params.get("index") if isinstance(params, dict) else None
                if isinstance(index, int) and index in today:
                    params["index"] = today[index]
                    self._recorded_index[today[index]] = index
        return json.dumps(said, ensure_ascii=False)

    def as_recorded(self, record: EpisodeRecord) -> EpisodeRecord:
        if type(record) is not ActionRecord or record.parsed is None:
            return record
        try:
            call = json.loads(record.raw)
        except json.JSONDecodeError:
            return record
        args = list(record.parsed.args)
        for params in call.values() if isinstance(call, dict) else ():
            index = params.get("index") if isinstance(params, dict) else None
            if isinstance(index, int) and index in self._recorded_index:
                params["index"] = self._recorded_index[index]
                args = [str(params["index"]) if arg == str(index) else arg for arg in args]
        raw = json.dumps(call, ensure_ascii=False, sort_keys=True)
        parsed = msgspec.structs.replace(record.parsed, args=tuple(args))
        return msgspec.structs.replace(record, raw=raw, parsed=parsed)


def _text(messages: list[dict[str, Any]]) -> str:
    content = messages[-1].get("content") if messages else None
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _same_elements(recorded: str, now: str) -> dict[int, int]:
    """Recorded index -> today's, for elements with the same description and occurrence on both pages."""

    def described(text: str) -> dict[tuple[str, str, int], int]:
        seen: Counter[tuple[str, str]] = Counter()
        found = {}
        for index, head, after in _ELEMENT.findall(text):
            key = (head, after.strip())
            found[(*key, seen[key])] = int(index)
            seen[key] += 1
        return found

    today = described(now)
    return {index: today[key] for key, index in described(recorded).items() if key in today}


def browser_use_volatile(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the page, the date and tab ids blanked, in text contents and text parts alike."""
    return [{**m, "content": _blank(m.get("content"))} for m in messages]


def _blank(content: Any) -> Any:
    if isinstance(content, str):
        for pattern, said in _VOLATILE:
            content = pattern.sub(said, content)
        return content
    if isinstance(content, list):
        return [{**part, "text": _blank(part["text"])} if "text" in part else part for part in content]
    return content


async def rerun_browser_use(
    store: EventStore,
    run_ref: str,
    task_ids: tuple[str, ...] = (),
    *,
    hosting: SiteHosting,
    chromium: str | None = None,
    progress: Callable[[ExecEpisode], None] | None = None,
) -> ExecReport:
    """Re-execute Browser-Use on each counted episode of ``run_ref`` (or ``task_ids``) against its recording."""
    run = await recorded_run(store, run_ref, "rerun", own_agent=False)
    check_version()
    refs = select_episodes(run, await episodes_of(store, run.run_id), task_ids)
    report = ExecReport(run, None)
    model = run.started.backbone_model
    scheme = run.started.scheme or "no-history"
    max_steps = run.started.config.max_steps
    browser = find_chromium(chromium)
    async with ReplayEndpoint() as endpoint, async_playwright() as attach:
        client = openai.AsyncOpenAI(base_url=f"{endpoint.url}/v1", api_key=REPLAY_KEY, max_retries=0)
        for ref in refs:
            source = await load_episode(store, ref.stream)
            replay = EpisodeReplay(source, BrowserUseVolatile())
            endpoint.episode = replay
            task = source.task()
            error = ""
            with _replay_mode(endpoint.url, ref.task_id):
                recording = await open_run(
                    MemoryEventStore(), label=run.label, agent=AGENT, model=model, tasks=[task], scheme=scheme
                )
                async with recording, hosting.serving([task]) as chromium_args:
                    try:
                        await record_episode(
                            recording, task, client=client, model=model,
                            retriever=None if scheme == "no-history" else _never_searched,
                            chromium=browser, chromium_args=chromium_args, max_steps=max_steps, attach=attach,
                        )  # fmt: skip
                    except Exception as failed:  # noqa: BLE001 - the agent's failure is its episode's divergence
                        error = f"{type(failed).__name__}: {failed}"
            endpoint.episode = None
            result = ExecEpisode(ref.stream, ref.task_id, replay.mismatch(), 1 if error else 0, error)
            report.episodes.append(result)
            if progress is not None:
                progress(result)
    return report


def _never_searched() -> HistoryRetriever:
    """The retriever Browser-Use's ``memory_access`` would search: in replay mode the recorded hits answer and the
    recording API never calls this (``EpisodeRecorder.retrieve``), so no embedder is loaded."""
    raise RuntimeError("a re-executed Browser-Use searched the history instead of its recording")


@contextlib.contextmanager
def _replay_mode(url: str, task_id: str) -> Iterator[None]:
    """The recording API's replay mode for this process, as ``rerun --exec`` sets it for an agent's process."""
    saved = {name: os.environ.get(name) for name in (REPLAY_ENV, "P2W_TASK_ID")}
    os.environ.update({REPLAY_ENV: url, "P2W_TASK_ID": task_id})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
