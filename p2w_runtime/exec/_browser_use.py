"""`rerun RUN` of a run recorded by ``record --agent browser-use``: Browser-Use re-executed in this process.

Each episode runs Browser-Use as ``record`` runs it (``record_episode``: the same settings, Chromium and demo
sites, live), under the recording API's replay mode (``rerun_in_process``): its model calls and history
retrievals are answered by the replay endpoint from the recording, and its would-be events are compared with the
recorded ones, as ``rerun --exec`` compares any agent's (docs/design/replay.md). Browser-Use's prompts change on
every run where nothing the agent decided did (the date, tab ids, element indices), so its requests are matched
with those normalised on both sides (``browser_use_volatile``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec
from playwright.async_api import async_playwright

from p2w_runtime.agent import SiteHosting
from p2w_runtime.browser import find_chromium
from p2w_runtime.domain.trajectory import ActionRecord, EpisodeRecord
from p2w_runtime.exec._in_process import InProcessEpisode, rerun_in_process
from p2w_runtime.exec._rerun_exec import ExecEpisode, ExecReport
from p2w_runtime.integrations.browser_use import AGENT, check_version, record_episode
from p2w_runtime.recording import open_run
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
    check_version()
    browser = find_chromium(chromium)
    async with async_playwright() as attach:

        async def episode(this: InProcessEpisode) -> None:
            started, task = this.run.started, this.task
            scheme = started.scheme or "no-history"
            recording = await open_run(
                MemoryEventStore(), label=this.run.label, agent=AGENT, model=started.backbone_model, tasks=[task],
                scheme=scheme,
            )  # fmt: skip
            async with recording, hosting.serving([task]) as chromium_args:
                await record_episode(
                    recording, task, client=this.client, model=started.backbone_model,
                    retriever=None if scheme == "no-history" else _never_searched,
                    chromium=browser, chromium_args=chromium_args, max_steps=started.config.max_steps, attach=attach,
                )  # fmt: skip

        return await rerun_in_process(store, run_ref, episode, task_ids, volatile=BrowserUseVolatile, progress=progress)


def _never_searched() -> HistoryRetriever:
    """The retriever Browser-Use's ``memory_access`` would search: in replay mode the recorded hits answer and the
    recording API never calls this (``EpisodeRecorder.retrieve``), so no embedder is loaded."""
    raise RuntimeError("a re-executed Browser-Use searched the history instead of its recording")
