"""`p2w-rt view` over HTTP against a real viewer process: pages, errors, escaping, sandbox headers, export."""

from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from p2w_cli.view.app import PAGE_CSP
from p2w_rt.schemas import blob_hash
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.stored_support import stored_events
from tests.helpers.view_support import (
    build_hostile_store,
    build_simple_run,
    cli,
    dangling_links,
    demo_db,
    event_count,
    fetch,
    serving,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str], Path]]:
    import asyncio

    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "hostile.db"
    ids = asyncio.run(build_hostile_store(db, "http://127.0.0.1:9"))
    with serving(db, cwd=folder) as url:
        yield url, ids, db


def _text(body: bytes) -> str:
    return body.decode("utf-8")


def test_demo_prints_the_view_command_that_opens_its_database(tmp_path_factory: pytest.TempPathFactory) -> None:
    db, stdout = demo_db(tmp_path_factory.getbasetemp())
    assert f"p2w-rt view --db {db}" in stdout.splitlines()[-1]


def test_every_page_of_the_demo_is_served_under_a_strict_csp(demo_process_url: str) -> None:
    status, headers, body = fetch(demo_process_url)
    assert status == 200 and headers["content-security-policy"] == PAGE_CSP
    runs = _text(body)
    assert "earlier" in runs and "later" in runs and "scripted-gpt" in runs and "rubric-rules" in runs
    status, _, body = fetch(demo_process_url + "run/earlier")
    run = _text(body)
    assert status == 200 and "Lena_Fischer_A1" in run and "history_utilization_failure" in run
    assert "24 of 24" in run and "0.917" in run, "episode count and the run's P_web from its judgments"
    status, _, body = fetch(demo_process_url + "run/earlier?label=personalization_hallucination")
    filtered = _text(body)
    assert (
        status == 200 and "1 of 24" in filtered and "Tomas_Reyes_B1" in filtered and "Lena_Fischer_A1" not in filtered
    )
    status, _, body = fetch(demo_process_url + "run/earlier?success=no&judge=rubric-rules")
    failures = _text(body)
    assert "Tomas_Reyes_B1" in failures and "Marcus_Okafor_C1" in failures and "Lena_Fischer_A1" in failures
    assert "Priya_Raman_B1" not in failures, "a success of earlier (lost in later) is filtered out"
    status, _, body = fetch(demo_process_url + "run/earlier/episode/Tomas_Reyes_B1")
    episode = _text(body)
    assert status == 200 and "web.retrieval" in episode and "personalization_hallucination" in episode
    assert 'sandbox=""' in episode and "/dom/" in episode and "HAR:" in episode
    status, _, body = fetch(demo_process_url + "compare?a=earlier&b=later")
    compare = _text(body)
    assert status == 200 and "7 gained" in compare and "1 lost" in compare and 'class="flip gained"' in compare
    status, _, body = fetch(demo_process_url + "compare?a=earlier&b=later&judge=rubric-llm")
    assert status == 409 and "has no rubric-llm judgments for" in _text(body), "an LLM judge is never paid for here"
    for name in ("levels", "errors"):
        status, headers, png = fetch(demo_process_url + f"run/earlier/plot/{name}.png")
        assert status == 200 and png.startswith(b"\x89PNG") and headers["content-type"] == "image/png"


def test_a_big_run_pages_by_100(tmp_path: Path) -> None:
    """Pagination: a big run shows 100 episodes per page, with the next page linked (timing: bench_view.py)."""
    import asyncio

    db = tmp_path / "big.db"
    asyncio.run(build_simple_run(db, "big", episodes=150))
    with serving(db, cwd=tmp_path) as url:
        status, _, body = fetch(url + "run/big")
        page = _text(body)
        assert status == 200 and page.count("/episode/") == 100 and "page 1 of 2" in page
        status, _, body = fetch(url + "run/big?page=2")
        assert _text(body).count("/episode/") == 50 and "page 2 of 2" in _text(body)


def test_unknown_run_episode_and_blob_are_404_pages_that_say_what_is_missing(demo_process_url: str) -> None:
    status, headers, body = fetch(demo_process_url + "run/no-such-run")
    assert (
        status == 404
        and "no run &#39;no-such-run&#39;" in _text(body)
        and headers["content-type"].startswith("text/html")
    )
    status, _, body = fetch(demo_process_url + "run/earlier/episode/Nobody_A1")
    assert status == 404 and "has no episode &#39;Nobody_A1&#39;" in _text(body)
    status, _, body = fetch(demo_process_url + "blob/" + "0" * 64)
    assert status == 404 and f"blob {'0' * 64} is not in the store" in _text(body)
    status, _, body = fetch(demo_process_url + "blob/../../etc/passwd")
    assert status == 404
    status, _, body = fetch(demo_process_url + "no/such/page")
    assert status == 404 and "Not found" in _text(body)


def test_a_corrupt_blob_is_a_clear_page_and_the_episode_still_opens(demo: Path, tmp_path: Path) -> None:
    db = tmp_path / "corrupt.db"
    shutil.copy(demo, db)
    final = next(e for e in stored_events(db, types=["final_state"]) if e.payload.get("screenshot"))
    sha, stream = final.payload["screenshot"], final.stream
    with raw_sqlite(db) as conn:
        conn.execute("DROP TRIGGER blobs_no_update")  # what a failing disk does, without asking
        conn.execute("UPDATE blobs SET data = x'28b52ffd0000deadbeef' WHERE sha256 = ?", (sha,))
    run_id, episode_id = stream.split("/", 1)
    with serving(db, cwd=tmp_path) as url:
        status, _, body = fetch(url + f"blob/{sha}")
        assert status == 500 and f"blob {sha} is corrupt" in _text(body) and "Traceback" not in _text(body)
        status, _, body = fetch(url + f"run/{run_id}/episode/{quote(episode_id, safe='')}")
        assert status == 200 and sha in _text(body), "the page still opens; only the image is broken"


def test_hostile_strings_are_printed_escaped_and_never_as_links(hostile: tuple[str, dict[str, str], Path]) -> None:
    url, ids, _ = hostile
    pages = [fetch(url)[2], fetch(url + f"run/{ids['run_id']}")[2]]
    pages.append(fetch(url + f"run/{ids['run_id']}/episode/{ids['episode_id']}")[2])
    for body in map(_text, pages):
        assert "<script>alert" not in body and "onerror=alert" not in body.replace("&#39;", "'").split("&lt;img")[0]
        assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in body
        assert 'href="javascript:' not in body
    episode = _text(pages[2])
    assert re.search(r"<img [^>]*onerror", episode) is None
    assert '<span class="url">javascript:alert(1)//&lt;script&gt;' in episode, "a javascript: URL is shown as text"


def test_recorded_pages_and_blobs_are_served_with_a_sandbox_csp_and_no_sniffing(
    hostile: tuple[str, dict[str, str], Path],
) -> None:
    url, ids, _ = hostile
    for path in (f"dom/{ids['dom']}", f"blob/{ids['dom']}", f"blob/{ids['screenshot']}"):
        status, headers, body = fetch(url + path)
        csp = headers["content-security-policy"]
        assert status == 200 and csp.startswith("sandbox;") and "default-src 'none'" in csp
        assert "script-src" not in csp and headers["x-content-type-options"] == "nosniff"
    assert fetch(url + f"blob/{ids['dom']}")[1]["content-type"].startswith("text/plain"), "a DOM as a blob is text"
    assert fetch(url + f"blob/{ids['screenshot']}")[1]["content-type"] == "image/png"


def test_browsing_and_an_unjudged_compare_append_nothing(hostile: tuple[str, dict[str, str], Path]) -> None:
    url, ids, db = hostile
    before = event_count(db)
    status, _, body = fetch(url + f"compare?a={ids['run_id']}&b={ids['run_id']}")
    assert status == 200, "a rules judge compares unjudged runs in memory, as diff does"
    fetch(url + f"run/{ids['run_id']}/episode/{ids['episode_id']}")
    assert event_count(db) == before, "the viewer never judges behind the user's back"


def test_compare_reads_a_second_database_only_when_given_with(demo: Path, tmp_path: Path) -> None:
    other = tmp_path / "march.db"
    shutil.copy(demo, other)
    with serving(demo, "--with", str(other), cwd=tmp_path) as url:
        status, _, body = fetch(url + f"compare?a=earlier&b={quote(str(other))}:later")
        assert status == 200 and "7 gained" in _text(body) and f"{other}:later" in _text(body)
    with serving(demo, cwd=tmp_path) as url:
        status, _, body = fetch(url + f"compare?a=earlier&b={quote(str(other))}:later")
        assert status == 403 and f"{other}: not a database this viewer was started with" in _text(body)


def test_user_errors_are_one_line_without_a_traceback(tmp_path: Path, demo: Path) -> None:
    missing = cli("view", "--db", str(tmp_path / "nope.db"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        f"error: {tmp_path / 'nope.db'}: no such database (record or import a run first, or pass --db)"
    ]
    unknown = cli("view", "--db", str(demo), "--export", str(tmp_path / "x"), "no-such-run", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: no run 'no-such-run'")
    assert len(unknown.stderr.splitlines()) == 1
    bare = cli("view", "--db", str(demo), "--export", str(tmp_path / "x"), cwd=tmp_path)
    assert (
        bare.returncode == 2 and "--export needs the runs to export" in bare.stderr and "Traceback" not in bare.stderr
    )
    busy = cli("view", "--db", str(demo), "earlier", cwd=tmp_path)
    assert busy.returncode == 2 and "RUN... is only for --export" in busy.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        clash = cli("view", "--db", str(demo), "--port", str(port), cwd=tmp_path)
    assert clash.returncode == 2
    assert clash.stderr.splitlines() == [
        f"error: --host 127.0.0.1 --port {port}: cannot listen there (Address already in use)"
    ]
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    denied = cli("view", "--db", str(demo), "--export", str(blocked / "out"), "earlier", cwd=tmp_path)
    assert denied.returncode != 0 and denied.stderr.startswith(f"error: cannot write the export to {blocked / 'out'}")


def test_the_static_export_is_self_contained(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = cli("view", "--db", str(demo), "--export", str(out), "earlier", "later", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "wrote 52 pages" in result.stdout, "index, two runs, 48 episodes, earlier → later compared"
    (link,) = re.findall(r'href="(compare-earlier-[^"]*\.html)"', (out / "index.html").read_text())
    compare = (out / link).read_text()
    assert "7 gained" in compare and 'class="flip gained"' in compare
    missing = dangling_links(out)
    assert not missing, missing[:5]
    shots = list((out / "blobs").glob("*.png"))
    assert shots and all(blob_hash(p.read_bytes()) == p.stem for p in shots)
    doms = list((out / "dom").glob("*.html"))
    assert doms and all(p.read_bytes().startswith(b'<meta http-equiv="Content-Security-Policy"') for p in doms)
