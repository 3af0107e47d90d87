"""What ``verify`` found, in words: the ``--json`` object, and the lines for people (problems and runs with
unsealed events on stderr, the summary, the digest last with ``--head``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from p2w_cli.render.terminal import safe
from p2w_cli.render.words import counted
from p2w_runtime.errors import clip

if TYPE_CHECKING:
    from p2w_runtime.store import VerifyReport

NAMED_STREAMS = 3
"""An unsealed tail names this many of its streams (a run in flight: the episodes being recorded)."""


def verify_json(
    report: VerifyReport, run_id: str | None, digest: str | None, expect: str | None, *, ok: bool, marked: bool
) -> dict[str, Any]:
    fields = ("streams", "events", "blobs", "seals", "unsealed", "incremental", "since", "through", "marks")
    return {"ok": ok, "run_id": run_id, **{name: getattr(report, name) for name in fields}, "head": digest} | {
        "full_because": report.full_because,
        "marked": marked,
        "uncovered": [{"run_id": t.run_id, "events": t.events, "streams": t.streams} for t in report.tails],
        "expected": expect and clip(expect),
        "problems": [dataclasses.asdict(p) for p in report.problems],
    }


def verify_lines(
    report: VerifyReport, run_id: str | None, digest: str | None, wrong: str | None, *, head: bool, marked: bool
) -> tuple[list[str], list[str]]:
    """(the lines for stderr, the lines for stdout); ``wrong``: the ``--expect`` digest the run's head is not."""
    err = [safe(f"MISMATCH {problem}") for problem in report.problems]
    if wrong is not None:
        err.append(safe(f"MISMATCH run {run_id}: head digest {digest}, expected {clip(wrong)}"))
    for tail in report.tails:
        if tail.events:
            err.append(safe(_tail_line(tail.run_id, tail.streams, no_seal=tail.run_id in report.unsealed)))
    summary = ", ".join(
        counted(n, noun)
        for n, noun in (
            (report.streams, "stream"),
            (report.events, "event"),
            (report.blobs, "blob"),
            (report.seals, "seal"),
        )
    )
    if report.incremental:
        summary += f" after position {report.since} (the log before it unchanged: its heads and counts)"
    if not report.ok or wrong is not None:
        err.append(f"verify failed: {len(report.problems) + (wrong is not None)} problem(s) in {summary}")
        return err, []
    uncovered = sum(t.events for t in report.tails)
    mark = f"; marked verified through position {report.through}" if marked else ""
    out = [f"ok: {summary} verified; {counted(uncovered, 'event')} not covered by a seal{mark}"]
    return err, out + ([digest or ""] if head else [])


def _tail_line(run_id: str, tail: dict[str, int], *, no_seal: bool) -> str:
    """``unsealed: run R: N events in M streams are not covered by a seal (S: n, ...)``; ``tail``: stream -> events."""
    streams, events = len(tail), sum(tail.values())
    named = ", ".join(f"{clip(s)}: {n}" for s, n in list(tail.items())[:NAMED_STREAMS])
    more = f" and {streams - NAMED_STREAMS} more" if streams > NAMED_STREAMS else ""
    verb = "is" if events == 1 else "are"
    line = f"unsealed: run {clip(run_id)}: {counted(events, 'event')} in {counted(streams, 'stream')} {verb}"
    line += f" not covered by a seal ({named}{more})"
    return line + ("; it has no seal (recorded before seals, or unfinished)" if no_seal else "")
