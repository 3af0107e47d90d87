"""The diff for people: the paper's Table 9 layout, flips, largest changes, divergences, unmatched tasks;
figures as every table prints them (``replay.metrics.figure``: fractions, three decimals)."""

from __future__ import annotations

import json

from rich.console import Console, Group, RenderableType
from rich.table import Column, Table
from rich.text import Text

from p2w_cli.render.terminal import cell, markup
from p2w_cli.render.words import counted
from p2w_rt.replay.diff import RunDiff
from p2w_rt.replay.metrics import METRICS, TITLES, figure, signed


def metrics_layout(title: str, label: str) -> Table:
    """A table with a ``label`` column, then one right-aligned column per metric (diff and stats alike)."""
    table = Table(title=markup(title))
    table.add_column(label)
    for name in METRICS:
        table.add_column(TITLES[name], justify="right")
    return table


def metric_table(diff: RunDiff) -> Table:
    """Rows A, B, Δ and its 95% interval; columns the five metrics."""
    title = f"{diff.a.source} → {diff.b.source}  (judge {diff.a.judge}, {counted(diff.paired, 'paired task')})"
    table = metrics_layout(title, "")
    table.add_row(cell(f"A {diff.a.source}"), *(figure(diff.metrics[m].a) for m in METRICS))
    table.add_row(cell(f"B {diff.b.source}"), *(figure(diff.metrics[m].b) for m in METRICS))
    table.add_row("Δ (B − A)", *(signed(diff.metrics[m].delta) for m in METRICS), style="bold")
    cis = [diff.metrics[m].ci for m in METRICS]
    table.add_row("95% CI", *("-" if ci is None else f"[{signed(ci[0])}, {signed(ci[1])}]" for ci in cis))
    return table


def _flips(diff: RunDiff) -> RenderableType:
    flipped = diff.gained + diff.lost
    head = Text(
        f"success flips: {len(diff.gained)} gained, {len(diff.lost)} lost; McNemar exact p = {diff.mcnemar_p:.4g}"
    )
    if not flipped:
        return head
    table = Table("task", "flip", "A P_avg / Intent", "B P_avg / Intent")
    for t in flipped:
        a, b = t.a.scores or {}, t.b.scores or {}
        style = "green" if t.flip == "gained" else "red"
        table.add_row(
            cell(t.task_id),
            cell(t.flip or "", style=style),
            f"{figure(a.get('p_avg'))} / {figure(a.get('intent'))}",
            f"{figure(b.get('p_avg'))} / {figure(b.get('intent'))}",
        )
    return Group(head, table)


def _largest(diff: RunDiff) -> RenderableType | None:
    if not diff.largest:
        return None
    table = Table("task", *(f"Δ{TITLES[m]}" for m in METRICS), title="largest score changes")
    for t in diff.largest:
        d = t.deltas()
        table.add_row(cell(t.task_id), *(signed(d[m]) for m in METRICS))
    return table


def _divergences(diff: RunDiff) -> RenderableType:
    """Tasks whose trajectories differ: the first differing step, the sites visited, the retrieval overlap."""
    parted = [t for t in diff.tasks if t.divergence is not None]
    same = len(diff.tasks) - len(parted)
    take = "takes" if same == 1 else "take"
    head = Text(f"trajectories: {same} of {counted(len(diff.tasks), 'task')} in both runs {take} the same actions")
    forked = [f"{t.task_id} after fork step {t.fork_step}" for t in diff.tasks if t.fork_step is not None]
    if forked:
        head.append(f"; forks are compared from the step they went live: {', '.join(forked)}")
    if not parted:
        return head
    # a long word (a URL) folds onto the next line instead of ending in "…": two actions cut at the same width
    # would read the same
    folded = (Column(name, overflow="fold") for name in ("A action", "B action", "websites A → B"))
    table = Table(Column("task", no_wrap=True), "step", *folded, "retrieval J")
    for t in parted:
        d = t.divergence
        assert d is not None
        sites_a, sites_b = ", ".join(t.a.websites) or "-", ", ".join(t.b.websites) or "-"
        table.add_row(
            cell(t.task_id),
            str(d.step)
            if d.after_fork_step is None
            else f"{d.step} (first divergence after fork step {d.after_fork_step})",
            cell(d.a_action or "(none)"),
            cell(d.b_action or "(none)"),
            cell(sites_a if sites_a == sites_b else f"{sites_a} → {sites_b}"),
            "-" if t.retrieval_jaccard is None else f"{t.retrieval_jaccard:.2f}",
        )
    return Group(head, table)


def render_diff(diff: RunDiff) -> RenderableType:
    parts: list[RenderableType] = [metric_table(diff), _flips(diff)]
    if (largest := _largest(diff)) is not None:
        parts.append(largest)
    if diff.tasks:
        parts.append(_divergences(diff))
    for name, tasks in (("only in A", diff.only_in_a), ("only in B", diff.only_in_b), ("unscored", diff.unscored)):
        if tasks:
            parts.append(cell(f"{name} ({len(tasks)}): {', '.join(tasks)}", style="yellow"))
    return Group(*parts)


def show_diff(diff: RunDiff, out: Console, *, as_json: bool = False) -> None:
    if as_json:
        out.print(json.dumps(diff.to_json(), ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
    else:
        out.print(render_diff(diff))
