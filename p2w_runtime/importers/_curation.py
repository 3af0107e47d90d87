"""AgenticShop curated results imported as a run: one episode per user, one ``page.capture`` per link.

Input: the reference's curation output (``[{"user", "search_results": [{"product_name", "product_url",
"reasoning"}]}]``, or the same as JSON lines), the user profiles it answered, and optionally a folder of
page captures: ``captures.jsonl`` with ``{"url", "status", "final_url", "html", "screenshot"}`` per fetched
page (``html`` / ``screenshot``: file names in that folder). A link without a capture is recorded as such
(``error``), and judges then count it as an invalid page: nothing is fetched at import or judging time.
With ``fetch`` the linked pages are captured now, in Chromium (the demo sites are started when a link
points at them), as a curation-time recording would have. Every file is checked before the first event
is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from p2w_runtime.browser import BrowserSession, capture_pages
from p2w_runtime.data import DataError, load_curation, load_profiles
from p2w_runtime.provenance import code_version
from p2w_runtime.sites import start_sites
from p2w_runtime.sites.catalog import TEST_DOMAIN, host_resolver_rules
from p2w_runtime.store import Recorder
from schemas import (
    RESULTS_JUDGED,
    CurationResult,
    EpisodeFinished,
    EpisodeStarted,
    NewEvent,
    PageCapture,
    RunFinished,
    RunStarted,
    ShopProfile,
    blob_hash,
    content_hash,
    uuid7,
)

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
    for n, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{manifest}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not JSON ({exc.msg})") from None
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


async def fetch_captures(urls: list[str], chromium: str | None = None) -> dict[str, Capture]:
    """Capture every URL now in one Chromium; the demo sites run for links under ``*.p2w.test``."""
    on_demo = any((urlsplit(u).hostname or "").endswith(f".{TEST_DOMAIN}") for u in urls)
    sites = await start_sites(0) if on_demo else None
    try:
        args = [host_resolver_rules(sites.port)] if sites else []
        async with BrowserSession(chromium, extra_args=args) as session:
            pages = await capture_pages(session, urls)
    finally:
        if sites is not None:
            await sites.stop()
    return {
        p.requested_url: Capture(p.requested_url, p.status, p.final_url, p.html, p.screenshot, p.error) for p in pages
    }


def _episode(
    run_id: str, profile: ShopProfile, result: CurationResult, captures: dict[str, Capture]
) -> tuple[list[NewEvent], dict[str, bytes]]:
    stream = f"{run_id}/{profile.task_id}"
    blobs: dict[str, bytes] = {}

    def blob(data: bytes | None) -> str | None:
        if data is None:
            return None
        sha = blob_hash(data)
        blobs[sha] = data
        return sha

    events = [
        NewEvent(
            stream=stream,
            payload=EpisodeStarted(
                episode_id=profile.task_id,
                task_id=profile.task_id,
                persona=profile.user,
                query_set=profile.query_type,
                level=None,
                query=profile.user_query,
                start_url="",
            ),
        )
    ]
    for index, product in enumerate(result.search_results[:RESULTS_JUDGED]):
        c = captures.get(product.product_url)
        payload = PageCapture(
            index=index,
            requested_url=product.product_url,
            final_url=c.final_url if c else None,
            status=c.status if c else None,
            title=product.product_name,
            dom_html=blob(c.html) if c else None,
            screenshot=blob(c.screenshot) if c else None,
            error=c.error if c else "not captured (imported without a page capture)",
        )
        events.append(NewEvent(stream=stream, payload=payload))
    answer = json.dumps(
        {"search_results": [p.model_dump(mode="json") for p in result.search_results]}, ensure_ascii=False
    )
    end = "error" if result.error else "answered"
    events.append(
        NewEvent(
            stream=stream,
            payload=EpisodeFinished(end_reason=end, answer=answer, detail=result.error, steps=0),
        )
    )
    return events, blobs


async def import_curation(
    store: Recorder,
    results: Path,
    profiles: Path,
    *,
    label: str,
    model: str,
    captures: Path | None = None,
    fetch: bool = False,
    chromium: str | None = None,
) -> str:
    """Check the files (and fetch the pages with ``fetch``), then append the run; returns its id."""
    loaded = load_curation(results)
    by_user: dict[str, list[ShopProfile]] = {}
    for p in load_profiles(profiles):
        by_user.setdefault(p.user, []).append(p)
    pages = load_captures(captures) if captures else {}
    episodes = []
    for n, result in enumerate(loaded):
        matches = by_user.get(result.user, [])
        if len(matches) != 1:
            why = "no profile" if not matches else f"{len(matches)} profiles (give one category's file)"
            raise DataError(f"{results}: [{n}] field 'user': {result.user} has {why} in {profiles}")
        episodes.append((matches[0], result))
    if fetch:
        urls = [p.product_url for _, r in episodes for p in r.search_results[:RESULTS_JUDGED]]
        pages = {**pages, **await fetch_captures(list(dict.fromkeys(urls)), chromium)}
    run_id = uuid7()
    started = RunStarted(
        run_id=run_id,
        label=label,
        source="imported",
        import_format=CURATION_FORMAT,
        agent="agenticshop-curation",
        backbone_model=model,
        dataset_id=f"agenticshop:{profiles.name}",
        dataset_hash=content_hash([p.model_dump(mode="json") for p, _ in episodes]),
        code_version=code_version(),
    )
    await store.append([NewEvent(stream=run_id, payload=started)])
    for profile, result in episodes:
        events, blobs = _episode(run_id, profile, result, pages)
        await store.append(events, blobs)
    await store.append([NewEvent(stream=run_id, payload=RunFinished(status="completed", episodes=len(episodes)))])
    return run_id
