"""Classifications for people: one line per episode, and the error summary table.

Recorded text goes through ``p2w_cli.render.terminal`` (actions and queries are full of brackets).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from p2w_cli.render.terminal import cell, markup
from p2w_rt.replay.classify import ClassifyOutcome, ErrorSummary


def outcome_lines(outcome: ClassifyOutcome) -> list[str]:
    """Rich markup lines; recorded text is escaped."""
    c = outcome.classification
    tag = "cached " if outcome.cached else ""
    task = markup(c.task_id)
    if c.status != "ok":
        return [f"{tag}[red]failed[/]  {task}: {markup(c.error or '')}"]
    names = markup(", ".join(label.label for label in c.labels)) or "[green]no error[/]"
    return [f"{tag}{task}  {names}", *(f"    {markup(label.label)}: {markup(label.explanation)}" for label in c.labels)]


def summary_table(summary: ErrorSummary) -> Table:
    """One row per error type, one column per run (headed by its label) or per agent / model / scheme: episodes
    showing the error."""
    table = Table(title=f"Episodes per error type ({markup(summary.classifier_id)} classifier)")
    table.add_column("error", no_wrap=True)
    for row in summary.rows:
        if row.run_label is not None:
            head = Text.assemble(cell(row.run_label, style="bold"), "\n", cell(f"{row.group} (n={row.episodes})"))
        else:
            head = Text.assemble(cell(row.group), "\n", cell(f"({', '.join(row.runs)}; n={row.episodes})"))
        table.add_column(head, justify="right")
    for label in summary.labels:
        table.add_row(cell(label), *(str(row.counts.get(label, 0)) for row in summary.rows))
    if any(row.unclassified for row in summary.rows):
        table.add_row("(unclassified)", *(str(row.unclassified) for row in summary.rows), style="yellow")
    return table
