"""What ``import`` did with a bundle, in words: the ``--json`` object and the line for people, each saying whether
the bundle was signed and whether its key is trusted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from p2w_cli.render.terminal import safe

if TYPE_CHECKING:
    from p2w_runtime.store import BundleSummary


def import_report(s: BundleSummary) -> tuple[dict[str, Any], str]:
    """(the ``--json`` object, the line)."""
    already = s.events - s.inserted
    read = {"run_id": s.run_id, "label": s.label, "events": s.events, "inserted": s.inserted}
    signature = {"signed_by": s.signed_by, "trusted": s.trusted, "signature": _signature_state(s)}
    line = (
        safe(f"imported {s.label} ({s.run_id}): {s.inserted} new events")
        + (f", {already} already present" if already else "")
        + f", {s.blobs} blobs; "
        + _signature_note(s)
    )
    return {**read, "already_present": already, "blobs": s.blobs, **signature}, line


def _signature_state(s: BundleSummary) -> str:
    """``unsigned``, ``verified`` (a valid signature by a key nobody vouched for) or ``trusted``."""
    return "unsigned" if s.signed_by is None else "trusted" if s.trusted else "verified"


def _signature_note(s: BundleSummary) -> str:
    if s.signed_by is None:
        return "unsigned bundle: nothing shows who wrote it"
    if s.trusted:
        return f"signature by trusted key {s.signed_by} verified"
    return f"signature by key {s.signed_by} verified (no --trusted-key: the key itself is not vouched for)"
