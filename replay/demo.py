"""`p2w-rt demo`: the replay side of the product on recorded runs, ending in a Markdown report with plots.

Imports the bundled example runs (an "earlier" and a "later" recording of the sample tasks), judges them
with ``rubric-rules`` (and ``rubric-llm`` on runs named for it), classifies their errors, diffs the two,
prints each view and writes ``report.md`` with the plots next to the database.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule

from p2w_runtime.errors import UserError
from p2w_runtime.store import Recorder, StoreError, bundle_header, find_run, import_bundle, list_runs, open_store
from p2w_runtime.terminal import cell, markup
from replay.classify import ClassifyOptions, classify_command
from replay.diff import diff_command
from replay.judges import JudgeSettings, make_judge
from replay.judging import replay_run
from replay.metrics import metrics_command

RULES_JUDGE = "rubric-rules"
VIEW_WIDTH = 120
"""Width each view is rendered at (and of the rule above it, even when piped output is unlimited)."""


@dataclass
class DemoReport:
    """What the demo showed, section by section, to be written as Markdown."""

    db: Path
    sections: list[tuple[str, str, str]] = field(default_factory=list)
    """(title, body, kind) with kind ``md`` (Markdown as is) or ``text`` (a fenced block)."""
    images: list[tuple[str, Path]] = field(default_factory=list)

    def markdown(self) -> str:
        lines = ["# p2w-rt demo report", "", f"Database: `{self.db}`", ""]
        for title, body, kind in self.sections:
            lines += [f"## {title}", ""]
            lines += [body.rstrip(), ""] if kind == "md" else ["```", body.rstrip(), "```", ""]
        for title, path in self.images:
            lines += [f"## {title}", "", f"![{title}]({path.name})", ""]
        return "\n".join(lines)


async def _text(produce: Callable[[Console], Any], width: int = VIEW_WIDTH) -> str:
    """What a view prints, as plain text."""
    recorder = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    await produce(recorder)
    return recorder.export_text()


async def _shown(title: str, out: Console, produce: Callable[[Console], Any]) -> str:
    """Run one view, print it under a rule, and return its plain text for the report."""
    text = await _text(produce)
    out.print(Rule(markup(title)), width=min(out.width, VIEW_WIDTH))
    out.print(text.rstrip(), markup=False, highlight=False, soft_wrap=True)
    return text


class DemoDatabaseInUse(UserError):
    """The demo's database file holds something the demo did not make; replacing it would lose it."""


async def prepare_demo_db(db: Path, bundles: Sequence[Path], *, force: bool) -> None:
    """Make ``db`` ready for the demo without ever deleting what the demo did not make.

    A missing file is created by the demo. A database holding only the bundled runs (an earlier demo's) is
    kept and reused: importing and judging them again adds nothing. One holding any other run (the user's, or
    one recorded with ``--record``, which cost tokens) or that is not a readable store is refused, unless
    ``force`` says to replace it.
    """
    if not db.exists():
        return
    if not force:
        ours = {bundle_header(bundle)["run_id"] for bundle in bundles}
        hint = "use --out NEW_FOLDER, or --force to replace it"
        try:
            async with open_store(db, create=False, read_only=True) as store:
                others = [run.label for run in await list_runs(store) if run.run_id not in ours]
        except StoreError as exc:
            raise DemoDatabaseInUse(f"{exc}; {hint}") from None
        if not others:
            return
        raise DemoDatabaseInUse(f"{db} holds runs the demo did not make ({', '.join(others)}); {hint}")
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)


async def import_example_runs(store: Recorder, bundles: Sequence[Path]) -> list[str]:
    """Import each bundle (idempotent) and return the run labels in order."""
    return [(await import_bundle(store, bundle)).label for bundle in bundles]


async def run_demo(
    store: Recorder,
    db: Path,
    runs: Sequence[str],
    *,
    out_dir: Path,
    out: Console,
    err: Console,
    llm_judged: Sequence[str] = (),
    llm_settings: JudgeSettings | None = None,
    llm_factory: Callable[[], Any] | None = None,
) -> DemoReport:
    """Judge, classify and diff ``runs`` (labels); the first two are diffed. Returns the report, not yet written."""
    report = DemoReport(db)
    infos = [await find_run(store, ref) for ref in runs]
    rules = make_judge(RULES_JUDGE, JudgeSettings())
    for info in infos:
        summary = await replay_run(store, info.run_id, [rules])
        err.print(cell(f"judged {info.label} with {RULES_JUDGE}: {summary.judged} new, {summary.cached} cached"))
    if llm_judged and llm_settings is not None:
        judge = make_judge("rubric-llm", llm_settings)
        for ref in llm_judged:
            info = await find_run(store, ref)
            summary = await replay_run(store, info.run_id, [judge], llm=llm_factory)
            err.print(cell(f"judged {info.label} with rubric-llm: {summary.judged} new, {summary.failed} failed"))
    levels_png = out_dir / "levels.png"
    errors_png = out_dir / "errors.png"

    async def metrics(console: Console, fmt: str, judge: str = RULES_JUDGE, plot: Path | None = None) -> None:
        await metrics_command(
            store, runs, judge=judge, by=("run", "model", "scheme"), fmt=fmt, plot=plot, out=console, err=err
        )

    await _shown(f"Metrics ({RULES_JUDGE})", out, lambda c: metrics(c, "table", plot=levels_png))
    report.sections.append((f"Metrics ({RULES_JUDGE})", await _text(lambda c: metrics(c, "md"), 200), "md"))
    if llm_judged:
        report.sections.append(
            ("Metrics (rubric-llm)", await _text(lambda c: metrics(c, "md", "rubric-llm"), 200), "md")
        )
    classify = ClassifyOptions(summary=True, per_run=True, plot=errors_png)
    text = await _shown(
        "Personalization errors (rules classifier)", out, lambda c: classify_command(store, runs, classify, c, err)
    )
    report.sections.append(("Personalization errors (rules classifier)", text, "text"))
    if len(infos) >= 2:
        a, b = infos[0].label, infos[1].label
        title = f"What changed from {infos[0].label} to {infos[1].label}"
        text = await _shown(title, out, lambda c: diff_command(db, a, b, judge=RULES_JUDGE, out=c))
        report.sections.append((title, text, "text"))
    report.images += [("Success and P_avg by ambiguity level", levels_png), ("Error types by run", errors_png)]
    return report


def write_report(report: DemoReport, path: Path) -> Path:
    path.write_text(report.markdown(), encoding="utf-8")
    return path
