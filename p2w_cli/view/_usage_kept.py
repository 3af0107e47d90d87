"""A finished run's usage scan kept beside the log, so a fresh viewer that must build a run's first page (the first
open after the run changed: a judging pass, a label) folds only the usage events appended since, not every
``llm.call`` of the run (docs/design/view.md, "The first open").

The row is the scan as it stood (``UsageScan``: its streams folded, the position read up to) and the price table
it priced with; the log is append-only and positions are assigned in commit order, so the scan continued from
that position is the scan of the whole run. A row past the log's end (events deleted behind the store's back) or
priced by another table is not used, and a run being recorded is not kept (its scan moves with every step).
"""

from __future__ import annotations

import hashlib
from functools import cache

import msgspec

from p2w_cli.view._kept_rows import write_row
from p2w_cli.view._usage import Flat, UsageScan
from p2w_runtime.domain import RunInfo
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import EventStore, Summary

KEEP_GAP = 5_000
"""Log positions a scan may move past its kept row on other runs' events alone before the row is written again."""
MODEL = "view.usage.v1"
"""The read model's name and its rows' kind: a change of what a row holds takes a new name (old rows are ignored)."""


class _Kept(msgspec.Struct, frozen=True):
    prices: str
    streams: dict[str, Flat]


def table_key(table: PriceTable) -> str:
    """Names a price table by its prices."""
    return hashlib.sha256(repr([(m, table.price(m)) for m in table.models]).encode()).hexdigest()[:16]


@cache
def prices_key() -> str:
    """Names the price table usage is priced with (the built-in one, extended by ``$P2W_PRICES``)."""
    return table_key(PriceTable.default())


async def kept_scan(store: EventStore, run_id: str, end: int) -> UsageScan:
    """The run's scan as last kept (to be caught up), or a new one."""
    scan = UsageScan(run_id)
    if await store.summary_mark(MODEL) is None:
        return scan
    found = await store.read_summaries(MODEL, group=run_id)
    if found and found[0].ordinal <= end:
        try:
            kept = msgspec.json.decode(found[0].body, type=_Kept)
        except msgspec.DecodeError:  # a row that no longer reads (cut short, edited by hand): the run is scanned
            return scan
        if kept.prices == table_key(scan.prices):
            scan.resume(found[0].ordinal, kept.streams)
    return scan


async def keep_scan(store: EventStore, info: RunInfo, scan: UsageScan, since: int, folded: int) -> None:
    """Store a finished run's scan when it folded more than the ``folded`` events it had at position ``since``, or
    read ``KEEP_GAP`` events of other runs past it: a viewer open while other runs record writes no row on every
    refresh, and a fresh one never reads more than that again for nothing."""
    if info.finished is not None and (scan.folded > folded or scan.position >= since + KEEP_GAP):
        body = msgspec.json.encode(_Kept(table_key(scan.prices), scan.flat())).decode()
        await write_row(store, MODEL, Summary(MODEL, info.run_id, info.run_id, scan.position, body), scan.position)
