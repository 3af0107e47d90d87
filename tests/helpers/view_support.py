"""Running ``p2w-rt view`` as a real process for the viewer tests, and stores with hostile content to serve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from p2w_rt.schemas import NewEvent, Observation, blob_hash
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite

URL_LINE = re.compile(r"at (http://\S+/)")
HOSTILE = "<script>alert('xss')</script><img src=x onerror=alert(1)>"
PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f"
    "00050001ff89993d1d0000000049454e44ae426082"
)


def cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process, importing this checkout."""
    return subprocess.run(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@contextmanager
def serving(db: Path, *extra: str, cwd: Path) -> Iterator[str]:
    """``p2w-rt view --db DB --port 0`` in its own process; yields the URL it prints, stops it at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", "view", "--db", str(db), "--port", "0", *extra],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        found = URL_LINE.search(line)
        assert found, f"no URL printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        url = found.group(1)
        _wait_until_up(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_until_up(url: str, proc: subprocess.Popen[str]) -> None:
    import urllib.request

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "viewer exited"
        try:
            with urllib.request.urlopen(url + "static/view.css", timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"viewer at {url} did not answer")


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers with lower-case names, body) of a GET, error statuses included."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


async def build_hostile_store(db: Path, beacon: str) -> dict[str, str]:
    """A run whose recorded text is hostile HTML and whose recorded DOM tries to run scripts and reach ``beacon``.

    Returns the ids a test needs: run id, episode id, the DOM's blob hash, the screenshot's blob hash.
    """
    run_id = "01hostile-run"
    dom = f"""<!doctype html><html><head><title>recorded</title>
<link rel="stylesheet" href="{beacon}/css">
<script>new Image().src = "{beacon}/script-ran"; window.top.document.title = "pwned";</script>
<script src="{beacon}/remote.js"></script>
</head><body><h1 id="recorded-heading">A recorded page</h1>
<img src="{beacon}/remote-image.png">
<img src="missing.png" onerror="new Image().src='{beacon}/onerror-ran'">
<iframe src="{beacon}/frame"></iframe>
<form action="{beacon}/form"><input name=q></form>
<body onload="new Image().src='{beacon}/onload-ran'"></body></html>"""
    b = EpisodeBuilder(run_id, "Hostile_Persona_A1", query=f"find shoes {HOSTILE}", level=1)
    shot = blob_hash(PNG_1PX)
    b.events.append(
        NewEvent(
            stream=b.stream,
            payload=Observation(step=1, url=f"javascript:alert(1)//{HOSTILE}", title=HOSTILE, screenshot=shot),
        )
    )
    b.blobs[shot] = PNG_1PX
    b.planner(1, f"I will click {HOSTILE}")
    b.action(1, "stop", HOSTILE)
    b.final_state(f"http://shop.example/{HOSTILE}", dom_html=dom, title=HOSTILE)
    b.finish("answered", HOSTILE, final_url="http://shop.example/", steps=1)
    async with open_store(db) as store:
        await store.append([run_started(run_id, f"hostile {HOSTILE}")])
        await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, 1)])
    return {"run_id": run_id, "episode_id": "Hostile_Persona_A1", "dom": blob_hash(dom.encode()), "screenshot": shot}


def demo_db(base: Path) -> tuple[Path, str]:
    """``p2w-rt demo`` once per test session (both viewer test modules share it): the database and its stdout."""
    out = base / "view-demo"
    done = out / "stdout.txt"
    if not done.exists():
        result = cli("demo", "--out", str(out), cwd=base)
        assert result.returncode == 0, result.stderr[-2000:]
        done.write_text(result.stdout)
    return out / "demo.db", done.read_text()


def dangling_links(out: Path) -> list[tuple[str, str]]:
    """(page, link) of each local link or source of a static export's pages in ``out`` that names no file there."""
    missing = []
    for page in out.glob("*.html"):
        for ref in re.findall(r'(?:href|src)="([^"#?]+)"', page.read_text()):
            if not ref.startswith("http") and not (out / ref).exists():
                missing.append((page.name, ref))
    return missing


def log_end(db: Path) -> int:
    """The store's last position, rows and segments alike (what a summary row's ordinal is compared with)."""

    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
        return max(rows, conn.execute("SELECT coalesce(max(last_position), 0) FROM segments").fetchone()[0])


def drop_rows(db: Path, *models: str) -> None:
    """The read models' rows and marks deleted behind the store's back: the next reader builds them again."""

    with raw_sqlite(db) as conn:
        for model in models:
            conn.execute("DELETE FROM summaries WHERE kind = ?", (model,))
            conn.execute("DELETE FROM summary_marks WHERE model = ?", (model,))


def event_count(db: Path) -> int:

    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT count(*) FROM events").fetchone()[0]  # and the imported episodes' segments
        return rows + conn.execute("SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM segments").fetchone()[0]


async def build_simple_run(db: Path, label: str, *, episodes: int) -> None:
    """A run of ``episodes`` two-step episodes, for paging."""
    run_id = f"01{label}-run"
    async with open_store(db) as store:
        await store.append([run_started(run_id, label)])
        for i in range(episodes):
            b = EpisodeBuilder(run_id, f"Persona{i:04d}_A1", query=f"task {i}")
            b.observation(1, f"https://shop.example/{i}", title=f"page {i}")
            b.action(1, "stop", f"answer {i}")
            b.finish("answered", f"answer {i}", final_url=f"https://shop.example/{i}", steps=1)
            await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, episodes)])


LONG_RUN = "01long-run"
LONG_TASK = "Long_Persona_A1"
LONG_STEPS = 250
"""The steps of the long episode the viewer tests serve: three pages of 100."""
FAILED_ATTEMPT_STEP = 221
"""The long episode's step with a failed LLM attempt (no answer, a model with no price) before the answered call."""
TRUTH_ENTRY = "bought running shoes size 10 at shop.example"
"""A retrieved entry of the long episode that states two ground-truth values (its website and a preference)."""


async def build_long_episode(db: Path, steps: int, *, label: str = "long", run_id: str = LONG_RUN) -> dict[str, int]:
    """One episode of ``steps`` steps (observation, planner call, reasoning, action each), written a chunk at a time
    as a recorder would, with a history access at step 150 whose first hit states the ground truth. Odd steps'
    calls use a priced model (gpt-4o-mini), even steps' one the price table does not know; step 221 has a failed
    attempt first (``FAILED_ATTEMPT_STEP``). Returns where things are:
    the step of the history access."""
    from p2w_rt.schemas import GroundTruth, LlmCall, LlmUsage, MemoryEntry
    from p2w_runtime.testing.episodes import EpisodeBuilder

    truth = GroundTruth(website="shop.example", websites=["shop.example"], preferences=["size 10"])
    b = EpisodeBuilder(run_id, LONG_TASK, query="buy my usual running shoes", ground_truth=truth, level=1)
    history_step = min(150, steps)
    async with open_store(db) as store:
        await store.append([run_started(run_id, label)])
        for step in range(1, steps + 1):
            b.observation(step, f"https://shop.example/p/{step}", title=f"page {step}")
            model = "gpt-4o-mini" if step % 2 else "house-model-7b"
            if step == FAILED_ATTEMPT_STEP:  # an attempt that got no answer, before the one that did
                b.writer.add(
                    LlmCall(
                        role="planner",
                        model="mystery-model",
                        step=step,
                        messages=[{"role": "user", "content": f"page {step}"}],
                        error="timeout",
                        latency_s=0.2,
                        fingerprint=f"{step:064x}",
                        ordinal=0,
                    )
                )
            b.writer.add(
                LlmCall(
                    role="planner",
                    model=model,
                    step=step,
                    messages=[{"role": "system", "content": "plan"}, {"role": "user", "content": f"page {step}"}],
                    response=f"click [{step}]",
                    usage=LlmUsage(prompt_tokens=1000, completion_tokens=100, total_tokens=1100),
                    latency_s=0.5,
                    fingerprint=f"{step:064x}",
                    ordinal=0,
                )
            )
            b.planner(step, f"reasoning of step {step}")
            if step == history_step:
                q = b.history_query("what shoes does the user buy", step=step)
                entries = [
                    MemoryEntry(timestamp="2024-01-01", type="purchase", object=TRUTH_ENTRY, website="shop.example"),
                    MemoryEntry(timestamp="2024-02-01", type="visit", object="read a blog", website="blog.example"),
                ]
                b.retrieval(q, "what shoes does the user buy", entries, step=step)
            b.action(step, "click", str(step))
            if step % 500 == 0:
                await store.append(*b.writer.take())
        b.action(steps, "stop", "done")
        b.final_state("https://shop.example/done", None, title="done")
        b.finish("answered", "done", final_url="https://shop.example/done", steps=steps)
        await store.append(*b.writer.take())
        await store.append([run_finished(run_id, 1)])
    return {"history_step": history_step}
