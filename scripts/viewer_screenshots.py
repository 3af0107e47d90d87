"""The viewer's run-level screenshots in docs/images/, taken in Chromium from the database `p2w-rt demo` writes.

    python scripts/viewer_screenshots.py [--out docs/images] [--db DEMO.db]

Without ``--db`` it runs ``p2w-rt demo`` into a temporary folder first. The demo's scripted model has no price,
so the viewer is started with ``P2W_PRICES`` pricing ``scripted-gpt`` as ``gpt-4o-mini`` (the built-in table's
rates): the cost column and chart then show what the price table makes of the recorded tokens. A copy of the
database gets a third run, ``live``, recorded with the recording API (``p2w_runtime.recording``) and left without
``run.finished``, for the "recording" page. Writes ``view-runs.png``, ``view-run.png`` (failures first),
``view-run-usage.png``, ``view-search.png`` and ``view-run-recording.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.async_api import async_playwright

from p2w_rt.schemas import LlmCall, LlmUsage
from p2w_runtime.browser import LAUNCH_ARGS, find_chromium
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.llm import PriceTable
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store

REPO = Path(__file__).resolve().parents[1]
DEMO_MODEL = "scripted-gpt"


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )


async def add_recording_run(db: Path) -> None:
    """Run ``live``: three episodes recorded with their model calls, and no ``run.finished`` (still recording)."""
    tasks = list(load_tasks(sample_tasks_dir()))[:6]
    async with open_store(db) as store:
        run = await open_run(store, label="live", agent="my-agent", model=DEMO_MODEL, tasks=tasks)
        for i, task in enumerate(tasks[:3]):
            async with run.episode(task) as episode:
                for step in range(1, 3 + i):
                    await episode.observe(url=f"http://search.p2w.test/?q={step}", title=f"results {step}")
                    prompt, completion = 900 + 250 * step, 40 + 5 * step
                    latency = 0.2 + 0.1 * step
                    await asyncio.sleep(latency)  # the model "answering", so the episode takes some time
                    episode.record_call(
                        LlmCall(
                            role="planner",
                            model=DEMO_MODEL,
                            step=step,
                            messages=[{"role": "user", "content": task.intent}],
                            response=f"click [{step}]",
                            usage=LlmUsage(
                                prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
                            ),
                            latency_s=latency,
                            fingerprint=f"{task.task_id}-{step}",
                            ordinal=0,
                        )
                    )
                    await episode.rationale(f"step {step}: open the best match")
                    await episode.action(f"click [{step}]")
                await episode.end("answered", answer=f"done with {task.task_id}")


def wait_until_up(url: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "static/view.css", timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"the viewer at {url} did not answer")


async def shoot(url: str, out: Path) -> list[Path]:
    written: list[Path] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=find_chromium(None, bundled=p.chromium.executable_path), args=list(LAUNCH_ARGS)
        )
        page = await browser.new_page(viewport={"width": 1400, "height": 900})

        async def save(name: str, top: str = "") -> None:
            """Lazy images (the plots) loaded and decoded first, then scrolled to ``top``, then the shot."""
            await page.eval_on_selector_all(
                "img", "(imgs) => Promise.all(imgs.map((img) => { img.loading = 'eager'; return img.decode(); }))"
            )
            if top:
                await page.eval_on_selector(top, "(el) => window.scrollTo(0, el.offsetTop - 90)")
            await page.screenshot(path=out / name)
            written.append(out / name)

        await page.goto(url)
        await save("view-runs.png")
        await page.goto(url + "run/earlier?sort=failures")
        await save("view-run.png", top="form.filters")
        await page.goto(url + "run/earlier")
        await save("view-run-usage.png", top=".usage")
        await page.goto(url)
        await page.fill(".search-box input", "running shoes")
        await page.press(".search-box input", "Enter")
        await page.wait_for_url("**/search?q=running+shoes")
        await save("view-search.png")
        await page.goto(url + "run/live")
        await page.wait_for_selector("#live")
        await save("view-run-recording.png")
        await browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--db", type=Path, help="A database `p2w-rt demo` wrote (default: run the demo now).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="p2w-shots-") as tmp:
        folder = Path(tmp)
        if args.db is None:
            demo = cli("demo", "--out", str(folder / "demo"), cwd=folder)
            _, err = demo.communicate(timeout=600)
            if demo.returncode != 0:
                sys.exit(f"p2w-rt demo failed: {err[-2000:]}")
            source = folder / "demo" / "demo.db"
        else:
            source = args.db
        db = folder / "demo.db"
        shutil.copy(source, db)
        asyncio.run(add_recording_run(db))
        price = PriceTable.builtin().price("gpt-4o-mini")
        assert price is not None
        prices = folder / "prices.json"
        rates = {"input_per_1k": price.input_per_1k, "output_per_1k": price.output_per_1k}
        prices.write_text(json.dumps({DEMO_MODEL: rates}))
        # started in the folder with a relative --db, so the header shows "demo.db", no path of this machine
        viewer = cli("view", "--db", db.name, "--port", "0", cwd=folder, env={"P2W_PRICES": str(prices)})
        try:
            assert viewer.stdout is not None
            found = re.search(r"at (http://\S+/)", viewer.stdout.readline())
            if not found:
                sys.exit(f"the viewer did not start: {viewer.stderr.read() if viewer.stderr else ''}")
            wait_until_up(found.group(1))
            args.out.mkdir(parents=True, exist_ok=True)
            for path in asyncio.run(shoot(found.group(1), args.out)):
                print(path)
        finally:
            viewer.terminate()
            viewer.wait(timeout=30)


if __name__ == "__main__":
    main()
