"""The bundle format as an exporter (``replay/exports.py``): one run with its blobs, as the store writes it."""

from __future__ import annotations

from collections.abc import Sequence

from p2w_rt.replay.exports import ExportRequest
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import BundleError, BundleSummary, EventStore, export_bundle, load_private_key


async def export_bundle_run(store: EventStore, runs: Sequence[RunInfo], request: ExportRequest) -> BundleSummary:
    """Write the one run of ``runs`` to the bundle ``request.output``, signed with ``request.signing_key`` if given."""
    if len(runs) != 1 or request.output is None:
        raise BundleError("a bundle holds one run and is written to a file")
    key = load_private_key(request.signing_key) if request.signing_key is not None else None
    (run,) = runs
    return await export_bundle(
        store, run.run_id, request.output, force=request.force, signing_key=key, progress=request.progress
    )
