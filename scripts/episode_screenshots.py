"""The viewer's episode-page screenshots in docs/images/, taken in Chromium from the database `p2w-rt demo` writes.

    python scripts/episode_screenshots.py [--out docs/images] [--db DEMO.db]

Without ``--db`` it runs ``p2w-rt demo`` into a temporary folder first. The viewer serves a copy of the database
with ``--annotator ana``; the copy gets one more run, ``long``, a 250-step episode built as
``benchmarks/bench_view_episode.py`` builds its episodes, since the demo's episodes fit on one page. The demo's
scripted model has no price, so its calls show "price unknown". Writes ``view-episode-steps.png`` (permalinks,
per-step figures, ground-truth marks), ``view-episode-prompt-diff.png`` (``?against=later``),
``view-episode-labels.png`` (the label form, after saving), ``view-episode-pages.png`` (page 2 of the long
episode), ``view-episode-permalink.png`` (the permalink ``?step=150#llm-150-1`` opened: page 2, the call open) and
``view-episode-judges.png`` (judges side by side: the copy's ``earlier`` is judged by ``rubric-llm`` against
``p2w-rt demo-model serve`` first, and ana labels the episode, so rules, an LLM, a person and the classifier differ).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.async_api import Page, async_playwright

from p2w_runtime.browser import LAUNCH_ARGS, find_chromium

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_view_episode import build  # noqa: E402  (the benchmark's episode builder, one for both)


def cli(*args: str, cwd: Path = REPO) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


async def shoot(url: str, out: Path) -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=find_chromium(None, bundled=p.chromium.executable_path), args=list(LAUNCH_ARGS)
        )
        page: Page = await browser.new_page(viewport={"width": 1400, "height": 900})

        await page.goto(url + "run/earlier/episode/Priya_Raman_B1")
        await page.locator("tr.truth").first.scroll_into_view_if_needed()
        await page.evaluate("window.scrollBy(0, 300)")
        await page.screenshot(path=out / "view-episode-steps.png")

        await page.goto(url + "run/earlier/episode/Tomas_Reyes_B1?against=later")
        await page.locator("#prompt-diff").scroll_into_view_if_needed()
        await page.screenshot(path=out / "view-episode-prompt-diff.png")

        await page.goto(url + "run/earlier/episode/Lena_Fischer_B1")
        await page.select_option("select[name=success]", "0.0")
        await page.select_option("select[name=p_web]", "1.0")
        await page.fill("input[name=p_pref]", "0.5")
        await page.select_option("select[name=intent]", "0.5")
        await page.check("input[value=history_utilization_failure]")
        await page.click(".label-form button[type=submit]")
        await page.wait_for_selector(".label-form .saved")
        await page.screenshot(path=out / "view-episode-labels.png")

        await page.goto(url + "run/earlier/episode/Tomas_Reyes_B1")
        await page.select_option("select[name=success]", "0.0")
        await page.select_option("select[name=p_web]", "0.5")
        await page.check("input[value=personalization_hallucination]")
        await page.click(".label-form button[type=submit]")
        await page.wait_for_selector(".label-form .saved")
        await page.click("a.judges-link")
        await page.wait_for_selector("#judges")
        await page.screenshot(path=out / "view-episode-judges.png", full_page=True)

        await page.goto(url + "run/long/episode/Bench_Persona_A1?page=2")
        await page.screenshot(path=out / "view-episode-pages.png")

        await page.goto(url + "run/long/episode/Bench_Persona_A1?step=150#llm-150-1")
        await page.wait_for_url(re.compile(r"page=2"))
        await page.screenshot(path=out / "view-episode-permalink.png")
        await browser.close()


def judge_with_the_demo_model(db: Path, folder: Path) -> None:
    """``earlier`` judged by ``rubric-llm`` against ``p2w-rt demo-model serve`` (its scripted top scores differ from
    the rules': a judge-against-judge view with something to show)."""
    served = cli("demo-model", "serve", "--port", "0", cwd=folder)
    try:
        assert served.stdout is not None
        base_url = served.stdout.readline().split()[3].rstrip(",")
        judged = cli("--db", db.name, "replay", "earlier", "--judge", "rubric-llm", "--base-url", base_url,
                     "--model", "scripted-model", cwd=folder)  # fmt: skip
        _, err = judged.communicate(timeout=600)
        if judged.returncode != 0:
            sys.exit(f"rubric-llm against the demo model failed: {err[-2000:]}")
    finally:
        served.terminate()
        served.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--db", type=Path, help="A database `p2w-rt demo` wrote (default: run the demo now).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        demo = args.db
        if demo is None:
            made = cli("demo", "--out", str(folder / "demo"))
            _, err = made.communicate(timeout=900)
            if made.returncode != 0:
                sys.exit(f"p2w-rt demo failed: {err[-2000:]}")
            demo = folder / "demo" / "demo.db"
        db = folder / "episode-shots.db"
        shutil.copy(demo, db)
        asyncio.run(build(db, "long", 250))
        judge_with_the_demo_model(db, folder)
        viewer = cli("view", "--db", db.name, "--port", "0", "--annotator", "ana", cwd=folder)  # its name on the pages
        try:
            assert viewer.stdout is not None
            found = re.search(r"at (http://\S+/)", viewer.stdout.readline())
            if not found:
                sys.exit(f"the viewer did not start: {viewer.stderr.read() if viewer.stderr else ''}")
            args.out.mkdir(parents=True, exist_ok=True)
            asyncio.run(shoot(found.group(1), args.out))
        finally:
            viewer.terminate()
            viewer.wait(timeout=30)
    print(f"wrote view-episode-steps, -prompt-diff, -labels, -judges, -pages and -permalink .png to {args.out}")


if __name__ == "__main__":
    main()
