"""A static export: the viewer's pages for some runs as files (blobs as files), to zip and share or open from disk.

The same templates render with ``ExportLinks``; recorded pages get the viewer's CSP as a ``<meta>`` tag in
front of them, since files opened from disk have no headers (the iframe's ``sandbox`` holds either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from p2w_cli.view._app import RECORDED_CSP
from p2w_cli.view._blobs import BlobProblem, read_blob
from p2w_cli.view._episode import episode_page
from p2w_cli.view._episode_rows import EpisodeFilter
from p2w_cli.view._export_folder import ExportFolder
from p2w_cli.view._links import ExportLinks
from p2w_cli.view._plots import NoPlot, plot_png
from p2w_cli.view._render import STATIC, environment
from p2w_cli.view._run_page import run_page, run_row
from p2w_cli.view._run_read import classifications_of, read_run
from p2w_cli.view._side_by_side import compared_run_data, comparison
from p2w_cli.view._usage import read_usage
from p2w_rt.replay.diff import DEFAULT_JUDGE, MissingJudgments, diff_runs
from p2w_rt.replay.judges import read_judgments
from p2w_runtime.domain import RunInfo, find_run
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore

META_CSP = RECORDED_CSP.replace("sandbox; ", "")
"""``sandbox`` is ignored in a ``<meta>`` CSP; the iframe's own ``sandbox`` attribute disables scripts there."""


class ExportError(UserError):
    """The export folder cannot be written."""


@dataclass(frozen=True, slots=True)
class ExportSummary:
    folder: Path
    pages: int
    blobs: int
    problems: list[str]
    replaced: bool
    """The folder held an earlier export, now replaced."""


async def export_static(
    store: EventStore, refs: Sequence[str], folder: Path, *, source: str = "", force: bool = False
) -> ExportSummary:
    """Write one page per run, per episode and per pair of consecutive runs (compare), the blobs, plots and assets
    into ``folder``, and ``index.html`` last: an export stopped halfway has no index of its own to open. An earlier
    export there is replaced; any other folder that is not empty is written into only with ``force``."""
    infos: list[RunInfo] = [await find_run(store, ref) for ref in refs]
    with ExportFolder(folder, ExportError, force=force) as files:
        return await _export(store, infos, files, source)


async def _export(store: EventStore, infos: list[RunInfo], files: ExportFolder, source: str) -> ExportSummary:
    """Every file is written through ``files``: beneath the folder, whatever links are already inside it, and
    nothing before the comparisons are judged (the likely failure), so a failed export leaves the earlier one."""
    links = ExportLinks({i.run_id for i in infos})
    env = environment()

    def render(template: str, **context: object) -> bytes:
        return env.get_template(template).render(links=links, source=source, **context).encode()

    def write(name: str, template: str, **context: object) -> None:
        files.write(name, render(template, **context))

    reads = {info.run_id: await read_run(store, info) for info in infos}
    usages = {
        run_id: await read_usage(store, read.info, {row.ref.stream: row.index for row in read.rows.values()})
        for run_id, read in reads.items()
    }
    pairs = list(zip(infos, infos[1:], strict=False))
    compares = [(a.label, b.label) for a, b in pairs]
    index = render("runs.html", rows=[run_row(read) for read in reads.values()], compares=compares)
    diffs = []
    for a, b in pairs:  # consecutive runs, as given, by the default judge; judged in memory, never written
        try:
            diffs.append(diff_runs(*await compared_run_data([(store, i, i.label) for i in (a, b)], DEFAULT_JUDGE)))
        except MissingJudgments as exc:
            raise ExportError(str(exc)) from None
    for asset in sorted(STATIC.iterdir()):
        files.write(f"static/{asset.name}", asset.read_bytes())
    pages = 1
    for (a, b), d in zip(pairs, diffs, strict=True):
        write(links.compare(a.label, b.label), "compare.html", c=comparison(d, a_local=True, b_local=True))
        pages += 1
    for info in infos:
        read = reads[info.run_id]
        p = run_page(read, EpisodeFilter(), 1, max(1, info.episodes), usages[info.run_id])
        write(links.run(info.run_id), "run.html", p=p)
        pages += 1
        judgments = await read_judgments(store, info.run_id)
        classifications = await classifications_of(store, read)
        for row in p.shown:
            ep = await episode_page(store, info, row.episode_id, judgments, classifications)
            write(links.episode(info.run_id, row.episode_id), "episode.html", p=ep, annotate=None, labelled=None)
            pages += 1
            for n in range(2, ep.pages + 1):  # a long episode: every page of its steps, as the server pages it
                more = await episode_page(store, info, row.episode_id, judgments, classifications, page=n)
                write(
                    links.episode(info.run_id, row.episode_id, n), "episode.html", p=more, annotate=None, labelled=None
                )
                pages += 1
    problems = [files.unlocked] if files.unlocked is not None else []
    for run_id, name in sorted(links.plots):
        try:
            png = plot_png(reads[run_id], name, usages[run_id], await classifications_of(store, reads[run_id]))
            files.write(links.plot(run_id, name), png)
        except NoPlot as exc:
            problems.append(str(exc))
    for sha, name in links.blobs.items():
        try:
            files.write(name, await read_blob(store, sha))
        except BlobProblem as exc:
            problems.append(str(exc))
    # in one order on every machine (a set's is per process): the journal and the problems are values
    for sha in sorted(links.doms):
        try:
            page = await read_blob(store, sha)
        except BlobProblem as exc:
            problems.append(str(exc))
            continue
        meta = f'<meta http-equiv="Content-Security-Policy" content="{META_CSP}">\n'.encode()
        files.write(links.dom(sha), meta + page)
    for sha, text in sorted(links.texts.items()):  # with a BOM: a browser opening it from disk reads it as UTF-8
        files.write(f"texts/{sha}.txt", "\ufeff".encode() + text.encode())
    files.write("index.html", index)  # last: an export stopped halfway has no index.html of its own to open
    return ExportSummary(files.root, pages, len(links.blobs) + len(links.doms), problems, files.replaced)
