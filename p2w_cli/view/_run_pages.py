"""A run's page data as a viewer keeps it across requests (its reads, its usage and usage scan) and the first page
built from them or taken from its stored row: what the viewer's routes share, and what a command that appended to a
run uses to bring that run's stored first page up to date (``rebuild_first_pages``, ``_refresh.py``)."""

from __future__ import annotations

from collections.abc import Callable, Collection

from p2w_cli.view._episode_rows import EpisodeFilter
from p2w_cli.view._first_page import keep_page, stored_page
from p2w_cli.view._log_kept import LogKept, RunIndex
from p2w_cli.view._run_cache import RunCache
from p2w_cli.view._run_page import PAGE_SIZE, RunPage, run_page
from p2w_cli.view._run_read import RunRead
from p2w_cli.view._usage import RunUsage, UsageScan
from p2w_cli.view._usage_kept import keep_scan, kept_scan
from p2w_runtime.collector import collector_paused
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore


class RunPages:
    """The runs read so far (``RunCache``), each run's usage and usage scan, and the first pages served."""

    def __init__(self) -> None:
        self.reads = RunCache()
        self.usages: LogKept[tuple[int, RunRead, UsageScan, int, RunUsage]] = LogKept()
        """Each run's usage with the log end, the read, the scan and how many events it had folded when it was made
        (kept across ends)."""
        self.scans: LogKept[UsageScan] = LogKept()
        """Each run's usage scan, kept across log ends (it catches up with what was appended)."""
        self.stored_pages = 0
        """First pages served from their stored rows (``_first_page.py``): the tests' witness of the first open."""

    async def first_page(self, store: EventStore, info: RunInfo, end: int) -> RunPage:
        """The run's first page from its stored row, else built from the whole run and stored."""
        stored = await stored_page(store, info, end)
        if stored is not None:
            self.stored_pages += 1
            return stored
        with collector_paused():  # the read, the usage and the page's figures: kept, or freed by reference counts
            read = await self.reads.get(store, info, end)
            built = run_page(read, EpisodeFilter(), 1, PAGE_SIZE, await self.usage_of(store, read, end))
        await keep_page(store, built, end)
        return built

    async def usage_of(self, store: EventStore, read: RunRead, end: int) -> RunUsage:
        """The run's usage at log end ``end``: made again only when its scan folded new events or the run was read
        again; a label or a judgment appended since (a read brought forward, no usage event) leaves it as it was."""
        run_id = read.info.run_id
        kept = self.usages.get(run_id, 0)
        if kept is not None and kept[0] == end:
            return kept[4]
        with collector_paused():  # as in ``read_run``: a fold per stream, all of it kept
            scan = self.scans.get(run_id, 0) or await kept_scan(store, run_id, end)
            since, folded = scan.position, scan.folded
            await scan.catch_up(store, end)
            await keep_scan(store, read.info, scan, since, folded)
            self.scans.put(run_id, 0, scan)
            if kept is not None and kept[1] is read and kept[2] is scan and kept[3] == scan.folded:
                usage = kept[4]
            else:
                counted = {row.ref.stream: row.index for row in read.rows.values()}
                usage = scan.usage(read.info, counted, [f.ref.stream for f in read.in_flight])
        self.usages.put(run_id, 0, (end, read, scan, scan.folded, usage))
        return usage


async def rebuild_first_pages(
    store: EventStore, run_ids: Collection[str], say: Callable[[str], None] | None = None
) -> list[str]:
    """Bring the first page of each finished run of ``run_ids`` up to the log's end (built from the run and stored,
    unless another process already has), saying so first: the ids of those runs."""
    end, runs = await RunIndex().runs(store)
    pages = RunPages()
    rebuilt = []
    for info in runs:
        if info.run_id in run_ids and info.finished is not None:
            if say is not None:
                say(f"updating the viewer's first page of {info.label} …")
            await pages.first_page(store, info, end)
            rebuilt.append(info.run_id)
    return rebuilt
