"""The recorded episode as the agent's environment: observations from the log, actions checked against it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from p2w_rt.schemas import ParsedAction
from p2w_runtime.browser import CapturedPage, EpisodeSettings, ExecResult, FinalStateData, ObservationData
from p2w_runtime.rerun._mismatch import Divergence, Mismatch
from p2w_runtime.rerun._recorded import RecordedEpisode, parsed_action
from p2w_runtime.store import EventStore


class RecordedEnvironment:
    """One episode's recording standing in for Chromium (``agent.Environment``).

    ``media``: also serve screenshots, DOM and HAR (for ``--record-as``); the agent reads none of them, and
    copying them through the scratch store was a third of a rerun's time.
    """

    def __init__(self, episode: RecordedEpisode, store: EventStore, divergence: Divergence, *, media: bool) -> None:
        self.episode = episode
        self.store = store
        self.divergence = divergence
        self.media = media

    async def new_context(
        self, *, har_path: str | Path | None = None, settings: EpisodeSettings | None = None
    ) -> RecordedTab:
        return RecordedTab(self.episode, self.store, self.divergence, media=self.media)


class RecordedTab:
    """Serves step k's recorded observation; a browser action is answered with the recorded outcome only when
    it is the recorded action, since after any other action the recorded pages say nothing."""

    def __init__(
        self, episode: RecordedEpisode, store: EventStore, divergence: Divergence, *, media: bool = True
    ) -> None:
        self.episode = episode
        self.store = store
        self.divergence = divergence
        self.media = media
        self.step = 0

    async def observe(self) -> ObservationData:
        step = self.step + 1
        seen = self.episode.observations.get(step)
        if seen is None:
            last = max(self.episode.observations, default=0)
            raise self.divergence.raise_(
                Mismatch(step, "ends later", f"episode ended after step {last}", f"observes step {step}")
            )
        self.step = step
        finished = self.episode.finished
        last = step == max(self.episode.observations)
        blocked = finished.detail if finished and finished.end_reason == "blocked" and last else None
        return ObservationData(
            url=seen.url,
            title=seen.title,
            tabs=list(seen.tabs),
            active_tab=0,
            ax_text=(await self._blob(seen.ax_tree)).decode() if seen.ax_tree else "",
            screenshot_png=await self._blob(seen.screenshot) if seen.screenshot and self.media else None,
            blocked=blocked,
        )

    async def execute(self, action: ParsedAction) -> ExecResult:
        if self.step == 0:  # the start page: reached when the recording observed anything at all
            return ExecResult("executed") if self.episode.observations else ExecResult("executed", "not recorded")
        recorded = self.episode.actions.get(self.step)
        if recorded is None or recorded.parsed is None or parsed_action(recorded.parsed) != action:
            raise self.divergence.raise_(
                Mismatch(self.step, "action differs", recorded.raw if recorded else None, action.render())
            )
        return ExecResult(recorded.status, recorded.error)

    async def capture(self, urls: Sequence[str]) -> list[CapturedPage]:
        """The recorded captures of these links (their pages, with ``media``); a link not captured then is an error."""
        recorded = {c.requested_url: c for c in self.episode.captures}
        pages: list[CapturedPage] = []
        for url in urls:
            c = recorded.get(url)
            if c is None:
                pages.append(CapturedPage(url, None, None, "", None, None, "not captured in the recording"))
                continue
            html = await self._blob(c.dom_html) if c.dom_html and self.media else None
            shot = await self._blob(c.screenshot) if c.screenshot and self.media else None
            pages.append(CapturedPage(url, c.final_url, c.status, c.title, html, shot, c.error))
        return pages

    async def final_state(self) -> FinalStateData:
        final = self.episode.final
        if final is None:
            raise RuntimeError(f"no final state recorded in {self.episode.stream}")
        if not self.media:
            return FinalStateData(url=final.url, title=final.title, dom_html=b"", ax_tree=b"", screenshot=b"")
        return FinalStateData(
            url=final.url,
            title=final.title,
            dom_html=await self._blob(final.dom_html),
            ax_tree=await self._blob(final.ax_tree),
            screenshot=await self._blob(final.screenshot),
            stylesheets=await self._blob(final.stylesheets),
        )

    async def close(self) -> bytes:
        final = self.episode.final
        return await self._blob(final.har if final and self.media else None)

    async def _blob(self, sha: str | None) -> bytes:
        return await self.store.get_blob(sha) if sha else b""
