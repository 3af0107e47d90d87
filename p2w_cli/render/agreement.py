"""``agree`` output: rich tables for a terminal, or one JSON document."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

from p2w_cli.render.terminal import cell, markup
from p2w_cli.render.words import counted
from p2w_rt.replay.agreement import AgreementReport, Estimate, PairReport


def _ci(e: Estimate) -> str:
    if math.isnan(e.value):
        return "—"
    if math.isnan(e.low):
        return f"{e.value:.3f}"
    return f"{e.value:.3f} [{e.low:.2f}, {e.high:.2f}]"


def _pair_table(p: PairReport) -> Table:
    table = Table(
        "item",
        "n",
        "accuracy",
        "Cohen κ",
        "Krippendorff α",
        "Spearman ρ",
        "Pearson r",
        "mean A → B (Δ)",
        "changed",
        title=markup(f"{p.a} vs {p.b}: {counted(p.episodes, 'shared episode')} (95% bootstrap CIs)"),
        title_justify="left",
    )
    for it in p.items:
        s = it.stats
        table.add_row(
            cell(it.item),
            str(s.units),
            _ci(s.accuracy),
            _ci(s.kappa),
            _ci(s.alpha),
            _ci(s.spearman),
            _ci(s.pearson),
            f"{s.mean_a:.3f} → {s.mean_b:.3f} ({_ci(s.mean_delta)})",
            str(it.changed),
        )
    return table


def render(report: AgreementReport, out: Console) -> None:
    for p in report.pairs:
        out.print(_pair_table(p))
        if p.changed_verdicts:
            tasks = ", ".join(f"{t} ({a:g}→{b:g})" for t, a, b in p.changed_verdicts)
            out.print(cell(f"success verdict changed on {counted(len(p.changed_verdicts), 'episode')}: {tasks}"))
    if report.groups:
        table = Table("item", "units", "Krippendorff α", title="agreement among all annotators", title_justify="left")
        for g in report.groups:
            table.add_row(cell(g.item), str(g.units), _ci(g.alpha))
        out.print(table)
    for sc in report.self_consistency:
        table = Table(
            "item",
            "self-agreement α",
            title=markup(f"{sc.rater}: {counted(sc.samples, 'sample')} on {counted(sc.episodes, 'episode')}"),
            title_justify="left",
        )
        for item, est in sc.alpha.items():
            table.add_row(cell(item), _ci(est))
        out.print(table)
        flips = ", ".join(sc.flipped) or "none"
        out.print(cell(f"success verdict flips between samples on {sc.flip_share:.1%} of episodes: {flips}"))


def as_json(report: AgreementReport) -> dict[str, Any]:
    def clean(x: float) -> float | None:
        return None if math.isnan(x) else round(x, 6)

    return {
        "run": report.run,
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "episodes": p.episodes,
                "changed_verdicts": [{"task": t, "a": a, "b": b} for t, a, b in p.changed_verdicts],
                "items": [
                    {
                        "item": it.item,
                        "units": it.stats.units,
                        "changed": it.changed,
                        "accuracy": it.stats.accuracy.as_dict(),
                        "kappa": it.stats.kappa.as_dict(),
                        "alpha": it.stats.alpha.as_dict(),
                        "spearman": it.stats.spearman.as_dict(),
                        "pearson": it.stats.pearson.as_dict(),
                        "mean_a": clean(it.stats.mean_a),
                        "mean_b": clean(it.stats.mean_b),
                        "mean_delta": it.stats.mean_delta.as_dict(),
                    }
                    for it in p.items
                ],
            }
            for p in report.pairs
        ],
        "annotators": [
            {"raters": list(g.raters), "item": g.item, "units": g.units, "alpha": g.alpha.as_dict()}
            for g in report.groups
        ],
        "self_consistency": [
            {
                "rater": sc.rater,
                "episodes": sc.episodes,
                "samples": sc.samples,
                "flip_share": clean(sc.flip_share),
                "flipped": sc.flipped,
                "alpha": {k: v.as_dict() for k, v in sc.alpha.items()},
            }
            for sc in report.self_consistency
        ],
    }
