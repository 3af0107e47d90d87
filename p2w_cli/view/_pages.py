"""The query functions behind the viewer: each page's data, which its HTML route renders and its ``/api/`` twin
serves as JSON, so the pages and any other client read one API.

Run lookups are kept while a store's log is unchanged (``RunIndex``, ``_log_kept.py``), so a page does not list
every run of the store again; nothing here appends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from p2w_cli.view._annotate import labels_from_form
from p2w_cli.view._episode import EpisodePage, UnknownEpisode, episode_page
from p2w_cli.view._episode_rows import EpisodeFilter
from p2w_cli.view._first_page import is_first
from p2w_cli.view._judges import JudgesPage, judges_page
from p2w_cli.view._live import RunLive, RunsLive, run_live, runs_live
from p2w_cli.view._log_kept import LogKept, RunIndex
from p2w_cli.view._plots import plot_png
from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._prompt_diff import NoCounterpart, prompt_diff
from p2w_cli.view._run_page import PAGE_SIZE, RunPage, RunRow, facets_row, run_page, run_row
from p2w_cli.view._run_pages import RunPages
from p2w_cli.view._search import SearchPage, SearchQuery, query_texts, search
from p2w_cli.view._side_by_side import Comparison, compared_run_data, comparison
from p2w_cli.view._usage import RunUsage
from p2w_rt.replay.agreement import ImportSummary, record_labels
from p2w_rt.replay.diff import DEFAULT_JUDGE, diff_runs, parse_ref
from p2w_rt.replay.judges import JUDGES
from p2w_runtime.domain import UnknownRun, episode_stream
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.errors import UserError
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import EventStore


class Forbidden(LookupError):
    """A compare asked for a database the viewer was not started with."""


@dataclass
class ViewState:
    """The stores the viewer reads: ``db`` and the extra files given with ``--with`` (compare only)."""

    db: Path
    others: Sequence[Path] = ()
    stores: dict[Path, EventStore] = field(default_factory=dict)

    def store(self) -> EventStore:
        return self.stores[self.db.resolve()]

    def store_for(self, path: Path) -> EventStore:
        found = self.stores.get(path.resolve())
        if found is None:
            raise Forbidden(f"{path}: not a database this viewer was started with (add --with {path})")
        return found


class ViewQueries(RunPages):
    """The viewer's reads over its stores; every route, HTML or JSON, asks these."""

    def __init__(self, state: ViewState) -> None:
        super().__init__()
        self.state = state
        self.index = RunIndex()
        self.texts: LogKept[dict[str, str]] = LogKept()
        self.plots: LogKept[bytes] = LogKept()
        """Drawn plots by ``RUN/NAME``: matplotlib is slow to draw a large run's usage chart again."""
        self.prices = PriceTable.default()
        """Prices calls recorded without a cost (the built-in table, extended by ``$P2W_PRICES``)."""

    async def runs(self, judge: str = "") -> list[RunRow]:
        """Every run, each headed by ``judge`` (else its default judge: ``headline_judge``). A run's line comes from
        its first page, stored or built and stored (``_first_page.py``), unless this viewer has read the run: a
        fresh viewer's runs page reads one row per run, not every run's episodes and judgments."""
        store = self.state.store()
        end, infos = await self.index.runs(store)
        rows = []
        for info in infos:
            if self.reads.holds(info.run_id, end):
                rows.append(run_row(await self.reads.get(store, info, end), judge))
            else:
                rows.append(facets_row(info, await self.first_page(store, info, end), judge))
        judged = sorted({j for row in rows for j in row.versions})
        if judge and judge not in judged:
            raise BadRequest("Unknown judge", f"?judge={judge!r}: no run is judged by it; known: {known(judged)}")
        return rows

    async def run(self, ref: str, wanted: EpisodeFilter, page: int) -> RunPage:
        """A run's first page (its link's) comes from its stored row unless this viewer has read the run already
        (``_first_page.py``); built from the whole run instead, it is stored for the next fresh viewer."""
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        if is_first(wanted, page) and not self.reads.holds(info.run_id, end):
            return await self.first_page(store, info, end)
        read = await self.reads.get(store, info, end)
        return run_page(read, wanted, page, PAGE_SIZE, await self.usage_of(store, read, end))

    async def usage(self, ref: str) -> RunUsage:
        """The run's time, tokens and cost per counted episode (the run page's chart and columns)."""
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        return await self.usage_of(store, await self.reads.get(store, info, end), end)

    async def run_of_path(self, path: str) -> tuple[str, str] | None:
        """(run id, label) of the run a page's path names (``/run/RUN/...``), for an error page's way back; None
        when the path names no run of the viewer's store."""
        parts = path.split("/")
        if len(parts) < 3 or parts[1] not in ("run", "label") or not parts[2]:
            return None
        try:
            _, info = await self.index.find(self.state.store(), unquote(parts[2]))
        except UnknownRun:
            return None
        return info.run_id, info.label

    async def live(self, ref: str) -> RunLive:
        """What a recording run's page polls: one ``count()`` while nothing was appended."""
        end, info = await self.index.find(self.state.store(), ref)
        return run_live(info, end)

    async def runs_live(self) -> RunsLive:
        """What the runs page polls while a listed run is recording: one log-end lookup while nothing was appended."""
        _, infos = await self.index.runs(self.state.store())
        return runs_live(infos)

    async def search(self, wanted: SearchQuery, page: int) -> SearchPage:
        """Every run's counted episodes whose task, query, answer or labels hold the words of ``wanted``."""
        store = self.state.store()
        end, infos = await self.index.runs(store)
        runs = []
        for info in infos:
            texts = self.texts.get(info.run_id, end)
            if texts is None:
                texts = await query_texts(store, info.run_id)
                self.texts.put(info.run_id, end, texts)
            runs.append((await self.reads.get(store, info, end), texts))
        return search(runs, wanted, page, PAGE_SIZE)

    async def episode(self, ref: str, episode_id: str, page: int = 1, against: str = "") -> EpisodePage:
        """One page of an episode's steps; with ``against`` (``RUN`` or ``FILE.db:RUN``), the prompt diff against
        that run's episode of the same task at their first divergent step."""
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        judgments = await self.reads.judgments(store, info, end)
        classifications = await self.reads.classifications(store, info, end)
        p = await episode_page(store, info, episode_id, judgments, classifications, page=page, prices=self.prices)
        if against:
            other = parse_ref(against, self.state.db)
            if not isinstance(other.db, Path):
                raise BadRequest("Not a SQLite file", f"?against={against}: the viewer compares runs of SQLite files")
            other_store = self.state.store_for(other.db)
            _, other_info = await self.index.find(other_store, other.run)
            whole = await load_trajectory(store, p.trajectory.stream)
            try:
                p.prompt_diff = await prompt_diff(store, whole, other_store, other_info, against)
            except NoCounterpart as exc:
                raise BadRequest("Nothing to diff against", f"?against={against}: {exc}") from None
        return p

    async def judges(self, ref: str, episode_id: str) -> JudgesPage:
        """Every current judgment and classification of one episode, side by side (``_judges.py``)."""
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        read = await self.reads.get(store, info, end)
        judgments = await self.reads.judgments(store, info, end)
        stream = episode_stream(info.run_id, episode_id)
        head = await store.stream_head(stream)
        if head is None or not episode_id:
            raise UnknownEpisode(f"run {info.label} has no episode {episode_id!r}")
        row = read.rows.get(stream)
        task = row.ref.task_id if row is not None else episode_id.partition("#")[0]
        episode = (stream, episode_id, task)
        classifications = await self.reads.classifications(store, info, end)
        return judges_page((info.run_id, info.label), episode, head.last_hash, judgments, classifications)

    async def label(
        self, ref: str, episode_id: str, form: Mapping[str, Sequence[str]], annotator: str
    ) -> ImportSummary:
        """Record a person's labels of one counted episode through ``import-labels``' path (``record_labels``). The
        episode is looked up in the run's kept read: the page the form was posted from read it."""
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        row = (await self.reads.get(store, info, end)).rows.get(episode_stream(info.run_id, episode_id))
        if row is None or not episode_id:
            raise BadRequest("Cannot label", f"run {info.label} has no counted episode {episode_id!r} to label")
        labels = labels_from_form(form, info.run_id, row.ref.task_id, annotator)
        try:
            return await record_labels(store, labels)
        except UserError as exc:
            raise BadRequest("Cannot label", str(exc)) from None

    async def plot(self, ref: str, name: str) -> bytes:
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        key = f"{info.run_id}/{name}"
        png = self.plots.get(key, end)
        if png is None:
            read = await self.reads.get(store, info, end)
            usage = await self.usage_of(store, read, end) if name == "usage" else None
            classified = await self.reads.classifications(store, info, end) if name == "errors" else []
            png = plot_png(read, name, usage, classified)
            self.plots.put(key, end, png)
        return png

    async def compare(self, a_text: str, b_text: str, judge: str = "") -> Comparison:
        """Runs ``a_text`` and ``b_text`` (``RUN`` or ``FILE.db:RUN``) by ``judge``'s existing judgments, both at one
        version of it, as ``p2w-rt diff`` scores them."""
        if not a_text or not b_text:
            raise BadRequest("Compare needs two runs", "give both ?a=RUN and ?b=RUN (or FILE.db:RUN)")
        judge = judge or DEFAULT_JUDGE
        if judge not in JUDGES.ids:
            raise BadRequest("Unknown judge", f"?judge={judge!r}: no such judge; known: {known(JUDGES.ids)}")
        runs, local = [], []
        for text in (a_text, b_text):
            ref = parse_ref(text, self.state.db)
            if not isinstance(ref.db, Path):
                raise BadRequest("Not a SQLite file", f"{text}: the viewer compares runs of SQLite files")
            store = self.state.store_for(ref.db)
            _, info = await self.index.find(store, ref.run)
            runs.append((store, info, text))
            local.append(ref.db.resolve() == self.state.db.resolve())
        a, b = await compared_run_data(runs, judge)
        return comparison(diff_runs(a, b), local[0], local[1])
