"""What ``record`` recorded, in one line: the run, its episodes by end reason, tokens and cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_cli.render.terminal import safe
from p2w_cli.render.words import counted

if TYPE_CHECKING:
    from p2w_runtime.agent import RecordSummary


def recorded_line(summary: RecordSummary) -> str:
    """``recorded LABEL (RUN): N episodes[, K kept from before]; n REASON, ...; T tokens[, $C]`` (a cost only when
    some episode's calls were priced)."""
    reasons: dict[str, int] = {}
    for outcome in summary.outcomes:
        reasons[outcome.end_reason] = reasons.get(outcome.end_reason, 0) + 1
    tokens = sum(o.tokens for o in summary.outcomes)
    costs = [o.cost_usd for o in summary.outcomes if o.cost_usd is not None]
    kept = f", {summary.kept} kept from before" if summary.kept else ""
    return (
        safe(f"recorded {summary.label} ({summary.run_id}): {counted(len(summary.outcomes), 'episode')}{kept}; ")
        + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        + f"; {tokens} tokens"
        + (f", ${sum(costs):.4f}" if costs else "")
    )
