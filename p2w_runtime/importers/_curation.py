"""AgenticShop curated results imported as a run: one episode per user, one ``page.capture`` per link.

Input: the reference's curation output (``[{"user", "search_results": [{"product_name", "product_url",
"reasoning"}]}]``, or the same as JSON lines), the user profiles it answered, and optionally a folder of
page captures: ``captures.jsonl`` with ``{"url", "status", "final_url", "html", "screenshot"}`` per fetched
page (``html`` / ``screenshot``: file names in that folder). A link without a capture is recorded as such
(``error``), and judges then count it as an invalid page: nothing is fetched at import or judging time.
With ``fetch`` the linked pages are captured now, in Chromium (with what the caller's ``SiteHosting``
serves: the CLI passes the demo sites), as a curation-time recording would have. Every file is checked
before the first event is written. A user with no curated product is an episode without captures: the judges
leave them out, as the reference does, and the import says who they are (``CurationImport.empty``).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

from p2w_rt.schemas import (
    RESULTS_JUDGED,
    CurationResult,
    EpisodeFinished,
    GroundTruth,
    NewEvent,
    PageCapture,
    ShopProfile,
    content_hash,
    uuid7,
)
from p2w_runtime.agent import SiteHosting
from p2w_runtime.browser import BrowserSession, capture_pages
from p2w_runtime.data import DataError, load_curation, load_profiles, read_json_lines
from p2w_runtime.domain import (
    EpisodeWriter,
    Provenance,
    RunSpec,
    append_sealed,
    check_task_id,
    episode_started,
    start_run,
)
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._storable import check_storable
from p2w_runtime.store import EventStore

CURATION_FORMAT = "agenticshop"
MAX_PAGE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Capture:
    url: str
    status: int | None
    final_url: str | None
    html: bytes | None
    screenshot: bytes | None
    error: str | None = None


def _read(folder: Path, name: object, where: str, field: str) -> bytes | None:
    if name in (None, ""):
        return None
    path = (folder / str(name)).resolve()
    if folder.resolve() not in path.parents:
        raise DataError(f"{where}: field {field!r}: {name!r} is outside {folder}")
    if not path.is_file():
        raise DataError(f"{where}: field {field!r}: no file {path}")
    if path.stat().st_size > MAX_PAGE_BYTES:
        raise DataError(f"{where}: field {field!r}: {path} is larger than {MAX_PAGE_BYTES} bytes")
    return path.read_bytes()


def load_captures(folder: Path) -> dict[str, Capture]:
    """``captures.jsonl`` of ``folder``, by requested URL; every referenced file must exist inside the folder."""
    manifest = folder / "captures.jsonl"
    if not manifest.is_file():
        raise DataError(f"{folder}: no captures.jsonl")
    out: dict[str, Capture] = {}
    for n, row in read_json_lines(manifest):
        where = f"{manifest}:{n}"
        if not isinstance(row, dict) or not isinstance(row.get("url"), str) or not row["url"]:
            raise DataError(f"{where}: field 'url' is missing")
        status = row.get("status")
        if status is not None and (not isinstance(status, int) or not 100 <= status <= 599):
            raise DataError(f"{where}: field 'status': {status!r} is not an HTTP status")
        out[row["url"]] = Capture(
            row["url"],
            status,
            row.get("final_url") or row["url"],
            _read(folder, row.get("html"), where, "html"),
            _read(folder, row.get("screenshot"), where, "screenshot"),
        )
    return out


class _Link:
    """A curated link as ``SiteHosting`` sees a task: the URL Chromium will open."""

    def __init__(self, url: str) -> None:
        self.start_url = url


async def fetch_captures(
    urls: list[str], chromium: str | None = None, hosting: SiteHosting | None = None
) -> dict[str, Capture]:
    """Capture every URL now in one Chromium, with what ``hosting`` serves for them (the demo sites)."""
    async with contextlib.AsyncExitStack() as stack:
        args = await stack.enter_async_context(hosting.serving([_Link(u) for u in urls])) if hosting else []
        async with BrowserSession(chromium, extra_args=args) as session:
            pages = await capture_pages(session, urls)
    return {
        p.requested_url: Capture(p.requested_url, p.status, p.final_url, p.html, p.screenshot, p.error) for p in pages
    }


@dataclass(frozen=True, slots=True)
class CurationImport:
    """The run an import appended, and which of its users curated nothing (the CLI names them)."""

    run_id: str
    empty: tuple[str, ...]
    """Task ids of the users whose curation has no product, in the file's order (the reference judges none of them)."""
    users: int


@dataclass(frozen=True, slots=True)
class _ProfileTask:
    """A user profile as ``episode.started`` records a task (``TaskLike``); a curation has no ground truth."""

    profile: ShopProfile
    level: int | None = None
    start_url: str = ""
    ground_truth: GroundTruth | None = None

    @property
    def task_id(self) -> str:
        return self.profile.task_id

    @property
    def persona(self) -> str:
        return self.profile.user

    @property
    def query_set(self) -> str:
        return self.profile.query_type

    @property
    def intent(self) -> str:
        return self.profile.user_query


def _episode(
    run_id: str, profile: ShopProfile, result: CurationResult, captures: dict[str, Capture]
) -> tuple[list[NewEvent], dict[str, bytes]]:
    writer = EpisodeWriter.of(run_id, profile.task_id)
    writer.add(episode_started(_ProfileTask(profile), episode_id=profile.task_id, scheme=None))
    for index, product in enumerate(result.search_results[:RESULTS_JUDGED]):
        c = captures.get(product.product_url)
        writer.add(
            PageCapture(
                index=index,
                requested_url=product.product_url,
                final_url=c.final_url if c else None,
                status=c.status if c else None,
                title=product.product_name,
                dom_html=writer.blob(c.html) if c and c.html is not None else None,
                screenshot=writer.blob(c.screenshot) if c and c.screenshot is not None else None,
                error=c.error if c else "not captured (imported without a page capture)",
            )
        )
    answer = json.dumps(
        {"search_results": [p.model_dump(mode="json") for p in result.search_results]}, ensure_ascii=False
    )
    end = "error" if result.error else "answered"
    writer.add(EpisodeFinished(end_reason=end, answer=answer, detail=result.error, steps=0))
    return writer.take()


async def import_curation(
    store: EventStore,
    results: Path,
    profiles: Path,
    *,
    label: str,
    model: str,
    captures: Path | None = None,
    fetch: bool = False,
    chromium: str | None = None,
    hosting: SiteHosting | None = None,
) -> CurationImport:
    """Check the files (and fetch the pages with ``fetch``), then append the run."""
    loaded = load_curation(results)
    by_user: dict[str, list[ShopProfile]] = {}
    for p in load_profiles(profiles):
        by_user.setdefault(p.user, []).append(p)
    pages = load_captures(captures) if captures else {}
    episodes = []
    seen: dict[str, int] = {}
    for n, result in enumerate(loaded):
        matches = by_user.get(result.user, [])
        if len(matches) != 1:
            why = "no profile" if not matches else f"{len(matches)} profiles (give one category's file)"
            raise DataError(f"{results}: [{n}] field 'user': {result.user} has {why} in {profiles}")
        if result.user in seen:  # one episode per user: a second one would silently replace the first
            raise DataError(f"{results}: [{n}] field 'user': {result.user} is also at [{seen[result.user]}]")
        seen[result.user] = n
        check_task_id(matches[0].task_id, f"{profiles}: user {result.user}")
        episodes.append((matches[0], result))
    if fetch:
        urls = [p.product_url for _, r in episodes for p in r.search_results[:RESULTS_JUDGED]]
        pages = {**pages, **await fetch_captures(list(dict.fromkeys(urls)), chromium, hosting)}
    dataset_hash = content_hash([p.model_dump(mode="json") for p, _ in episodes])
    spec = RunSpec(
        label=label,
        agent="agenticshop-curation",
        model=model,
        scheme=None,
        provenance=Provenance.here(f"agenticshop:{profiles.name}", dataset_hash),
        source="imported",
        import_format=CURATION_FORMAT,
    )
    run_id = uuid7()
    built = [_episode(run_id, profile, result, pages) for profile, result in episodes]  # checked before the start
    for (profile, _), (events, _) in zip(episodes, built, strict=True):
        try:
            check_storable(results, events)
        except TrajectoryImportError as exc:
            raise DataError(f"{results}: user {profile.user}: {exc.message}") from None
    run = await start_run(store, spec, run_id=run_id)
    for events, blobs in built:
        await append_sealed(store, events, blobs)
    await run.close()
    empty = tuple(p.task_id for p, r in episodes if not r.search_results)
    return CurationImport(run.run_id, empty, len(episodes))
