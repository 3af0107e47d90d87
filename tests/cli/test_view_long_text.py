"""A recorded value of any size makes pages of one size: each is shown clipped, its whole text one click away.

The runs are recorded through the recording API, as an outside agent records one: an answer and a rationale of
1 MB in one, of 4 MB in the other.
"""

from __future__ import annotations

import asyncio
import re
from html import unescape
from pathlib import Path
from urllib.parse import urljoin

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.recording import ParsedAction, open_run, open_store
from tests.helpers.recording_tasks import TASKS
from tests.helpers.view_app import serving_app
from tests.helpers.view_support import fetch

WHOLE = re.compile(r'<a class="whole" href="([^"]+)">')


def _text(size: int, seed: str) -> str:
    return (f"{seed} penne rigate 500 g, gluten-free; " * (size // 30 + 1))[:size]


async def _record(db: Path, label: str, size: int) -> tuple[str, str]:
    """A run of one episode whose answer and planner rationale are ``size`` characters each."""
    answer, why = _text(size, "answer"), _text(size, "because")
    async with open_store(db) as store:
        run = await open_run(store, label=label, agent="mine", model="m", tasks=TASKS[:1], carried=False)
        async with run.episode("T1") as episode:
            await episode.observe(url="http://shop.example/", title="Shop")
            await episode.rationale(why)
            await episode.action("type [1] [penne]", ParsedAction(name="type", args=["1", "penne"]))
            await episode.end("answered", answer)
        await run.close()
        return run.run_id, answer


def test_pages_keep_one_size_whatever_the_recorded_text_and_link_its_whole(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    small_id, _ = asyncio.run(_record(db, "small", 1_000_000))
    large_id, answer = asyncio.run(_record(db, "large", 4_000_000))
    with serving_app(db) as (url, _app):
        sizes = {}
        for run_id in (small_id, large_id):
            run_page = fetch(f"{url}run/{run_id}")
            episode_page = fetch(f"{url}run/{run_id}/episode/T1")
            assert run_page[0] == episode_page[0] == 200
            sizes[run_id] = (len(run_page[2]), len(episode_page[2]))
        assert abs(sizes[large_id][0] - sizes[small_id][0]) < 100 and sizes[large_id][0] < 50_000, sizes
        assert abs(sizes[large_id][1] - sizes[small_id][1]) < 100 and sizes[large_id][1] < 200_000, sizes
        page = episode_page[2].decode()
        status, headers, whole = fetch(urljoin(url, unescape(WHOLE.findall(page)[-1])))
    assert page.count("3,980,000 more characters: the whole text") == 3, "the answer twice, the rationale once"
    assert status == 200 and headers["content-type"] == "text/plain; charset=utf-8"
    assert whole.decode() == answer, "the whole answer, one click away"

    out = tmp_path / "site"
    done = CliRunner().invoke(main, ["--db", str(db), "view", "--export", str(out), "large"])
    assert done.exit_code == 0, done.output
    (episode_file,) = out.glob("episode-*.html")
    exported = episode_file.read_text()
    assert len(exported) < 200_000 and max(f.stat().st_size for f in out.glob("run-*.html")) < 50_000
    linked = {out / unescape(href) for href in WHOLE.findall(exported)}
    assert {f.read_text(encoding="utf-8-sig") for f in linked} == {answer, _text(4_000_000, "because")}
