"""The query functions behind the viewer: each page's data, which its HTML route renders and its ``/api/`` twin
serves as JSON, so the pages and any other client read one API.

Run lookups are kept while a store's log is unchanged (``RunIndex``), so a page does not list every run of the
store again; nothing here appends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from p2w_cli.view._episode import EpisodePage, episode_page
from p2w_cli.view._plots import plot_png
from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._queries import PAGE_SIZE, EpisodeFilter, RunCache, RunPage, RunRow, run_page, run_row
from p2w_cli.view._side_by_side import SideBySide, side_by_side
from p2w_runtime.domain import RunInfo, list_runs, match_run
from p2w_runtime.store import EventStore
from replay.diff import DEFAULT_JUDGE, RunDiff, diff_runs, load_run_data, parse_ref
from replay.judges import JUDGES


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


class RunIndex:
    """Each store's runs (``list_runs``) with the log end they were listed at. The log is append-only, so its
    last position names its state: while it is unchanged a page finds its runs here, the next append lists again.
    ``log_end`` is one index lookup (``count()`` scanned the whole events table: 8.5x slower a page with nine
    unrelated runs beside the one shown)."""

    def __init__(self) -> None:
        self.listed = 0
        """How often ``list_runs`` ran: what a page after an append costs, and the cache's test."""
        self._kept: dict[int, tuple[int, list[RunInfo]]] = {}

    async def runs(self, store: EventStore) -> tuple[int, list[RunInfo]]:
        """(the log end, every run of ``store`` at that end)."""
        end = await store.log_end()
        kept = self._kept.get(id(store))
        if kept is not None and kept[0] == end:
            return kept
        self.listed += 1
        self._kept[id(store)] = (end, await list_runs(store))
        return self._kept[id(store)]

    async def find(self, store: EventStore, ref: str) -> tuple[int, RunInfo]:
        end, runs = await self.runs(store)
        return end, match_run(runs, ref, store.label)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Compare's data: the diff of two runs, each task side by side, and which run is in the viewer's own db."""

    diff: RunDiff
    sides: dict[str, SideBySide]
    """By task id: the two trajectories from where they part."""
    a_local: bool
    b_local: bool


class ViewQueries:
    """The viewer's reads over its stores; every route, HTML or JSON, asks these."""

    def __init__(self, state: ViewState) -> None:
        self.state = state
        self.index = RunIndex()
        self.reads = RunCache()

    async def runs(self) -> list[RunRow]:
        store = self.state.store()
        end, infos = await self.index.runs(store)
        return [run_row(await self.reads.get(store, info, end)) for info in infos]

    async def run(self, ref: str, wanted: EpisodeFilter, page: int) -> RunPage:
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        return run_page(await self.reads.get(store, info, end), wanted, page, PAGE_SIZE)

    async def episode(self, ref: str, episode_id: str) -> EpisodePage:
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        judgments = await self.reads.judgments(store, info, end)
        classifications = (await self.reads.get(store, info, end)).classifications
        return await episode_page(store, info, episode_id, judgments, classifications)

    async def plot(self, ref: str, name: str) -> bytes:
        store = self.state.store()
        end, info = await self.index.find(store, ref)
        return plot_png(await self.reads.get(store, info, end), name)

    async def compare(self, a_text: str, b_text: str, judge: str = "") -> Comparison:
        """Runs ``a_text`` and ``b_text`` (``RUN`` or ``FILE.db:RUN``) by ``judge``'s existing judgments."""
        if not a_text or not b_text:
            raise BadRequest("Compare needs two runs", "give both ?a=RUN and ?b=RUN (or FILE.db:RUN)")
        judge = judge or DEFAULT_JUDGE
        if judge not in JUDGES.ids:
            raise BadRequest("Unknown judge", f"?judge={judge!r}: no such judge; known: {known(JUDGES.ids)}")
        data, local = [], []
        for text in (a_text, b_text):
            ref = parse_ref(text, self.state.db)
            if not isinstance(ref.db, Path):
                raise BadRequest("Not a SQLite file", f"{text}: the viewer compares runs of SQLite files")
            store = self.state.store_for(ref.db)
            _, info = await self.index.find(store, ref.run)
            data.append(await load_run_data(store, info, judge, text))
            local.append(ref.db.resolve() == self.state.db.resolve())
        d = diff_runs(data[0], data[1])
        return Comparison(d, {t.task_id: side_by_side(t) for t in d.tasks}, local[0], local[1])
