"""What ``p2w-rt demo`` needs of the library: a database it may use, the example runs imported, judged,
classified and diffed (``DemoData``), and the report file (the views are rendered by ``p2w_cli.render.demo``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from p2w_rt.replay.classify import ClassifyOptions, ErrorSummary, classify_runs
from p2w_rt.replay.derived import LlmFactory, PassSettings, run_pass
from p2w_rt.replay.diff import RunDiff, diff_refs
from p2w_rt.replay.judges import JUDGES, JudgeSummary, make_judge
from p2w_rt.replay.metrics import MetricsReport, metrics_report
from p2w_runtime.domain import RunInfo, find_run, list_runs
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore, StoreError, bundle_header, import_bundle, open_store

RULES_JUDGE = "rubric-rules"
LLM_JUDGE = "rubric-llm"


@dataclass
class DemoReport:
    """What the demo showed, section by section, to be written as Markdown."""

    db: Path
    sections: list[tuple[str, str]] = field(default_factory=list)
    """(title, body): the body is Markdown (pipe tables and paragraphs), written as is."""
    images: list[tuple[str, Path]] = field(default_factory=list)

    def markdown(self) -> str:
        lines = ["# p2w-rt demo report", "", f"Database: `{self.db.name}` (beside this report)", ""]
        for title, body in self.sections:
            lines += [f"## {title}", "", body.rstrip(), ""]
        for title, path in self.images:
            lines += [f"## {title}", "", f"![{title}]({path.name})", ""]
        return "\n".join(lines)


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


async def import_example_runs(store: EventStore, bundles: Sequence[Path]) -> list[str]:
    """Import each bundle (idempotent) and return the run labels in order."""
    return [(await import_bundle(store, bundle)).label for bundle in bundles]


async def judge_demo_runs(
    store: EventStore,
    runs: Sequence[str],
    *,
    llm_judged: Sequence[str] = (),
    llm_settings: PassSettings | None = None,
    llm_factory: LlmFactory | None = None,
) -> list[tuple[RunInfo, str, JudgeSummary]]:
    """Judge ``runs`` (labels) with ``rubric-rules``, and ``llm_judged`` with ``rubric-llm``: (run, judge, summary)."""
    judged: list[tuple[RunInfo, str, JudgeSummary]] = []
    rules = make_judge(RULES_JUDGE, PassSettings())
    for ref in runs:
        info = await find_run(store, ref)
        judged.append((info, RULES_JUDGE, await run_pass(JUDGES, store, info.run_id, [rules])))
    if llm_judged and llm_settings is not None:
        judge = make_judge(LLM_JUDGE, llm_settings)
        for ref in llm_judged:
            info = await find_run(store, ref)
            judged.append((info, LLM_JUDGE, await run_pass(JUDGES, store, info.run_id, [judge], llm=llm_factory)))
    return judged


@dataclass(frozen=True, slots=True)
class DemoData:
    """Everything the demo shows, computed: judging counts, metric tables, error summary, the diff, the plots."""

    db: Path
    judged: list[tuple[RunInfo, str, JudgeSummary]]
    rules_metrics: MetricsReport
    llm_metrics: MetricsReport | None
    errors: ErrorSummary
    errors_png: Path
    diff: RunDiff | None


async def demo_data(
    store: EventStore,
    db: Path,
    runs: Sequence[str],
    *,
    out_dir: Path,
    llm_judged: Sequence[str] = (),
    llm_settings: PassSettings | None = None,
    llm_factory: LlmFactory | None = None,
) -> DemoData:
    """Judge, classify and diff ``runs`` (labels; the first two are diffed) and write the plots into ``out_dir``."""
    judged = await judge_demo_runs(
        store, runs, llm_judged=llm_judged, llm_settings=llm_settings, llm_factory=llm_factory
    )
    by = ("run", "model", "scheme")
    rules = await metrics_report(store, runs, judge=RULES_JUDGE, by=by, plot=out_dir / "levels.png")
    llm = await metrics_report(store, runs, judge=LLM_JUDGE, by=by, plot=None) if llm_judged else None
    infos = [await find_run(store, ref) for ref in runs]
    options = ClassifyOptions(summary=True, per_run=True, plot=out_dir / "errors.png")
    classified = await classify_runs(store, [info.run_id for info in infos], options)
    assert classified.errors is not None and classified.plot is not None  # asked for by ``options``
    errors, errors_png = classified.errors, classified.plot
    diff = None
    if len(infos) >= 2:
        diff = await diff_refs(db, infos[0].label, infos[1].label, judge=RULES_JUDGE)
    return DemoData(db, judged, rules, llm, errors, errors_png, diff)


def write_report(report: DemoReport, path: Path) -> Path:
    """Write the report's Markdown to ``path`` (the plots it links are already next to it)."""
    path.write_text(report.markdown(), encoding="utf-8")
    return path
