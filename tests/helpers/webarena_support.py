"""Judge one synthetic episode that ended on a recorded page: the shared step of the webarena test files."""

from __future__ import annotations

from typing import Any

from p2w_rt.replay.judges import JudgeContext, Scorecard
from p2w_rt.replay.webarena import WebArenaJudge
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.paths import DATA

DEFAULT_PAGE = "<html><body><p>final page</p></body></html>"
REAL = DATA / "webarena" / "test.raw.json"
"""WebArena's real task configs (vendored, see tests/data/README.md)."""
SITES = {
    "gitlab": "http://gitlab.test:8023",
    "reddit": "http://reddit.test:9999",
    "shopping": "http://shop.test:7770",
    "shopping_admin": "http://admin.test:7780/admin",
    "map": "http://map.test:3000",
}
"""Where the placeholders of the real configs point in these tests."""


async def judged(
    judge: WebArenaJudge,
    task_id: int | str,
    answer: str | None = None,
    *,
    url: str = "http://gitlab.test:8023/",
    page: str = DEFAULT_PAGE,
    stylesheets: dict[str, str] | None = None,
    llm: Any = None,
) -> Scorecard:
    b = EpisodeBuilder("run", str(task_id), level=None)
    b.action(1, "stop", answer or "")
    b.final_state(url, page, stylesheets=stylesheets)
    b.finish("answered" if answer else "no_answer", answer, final_url=url)

    async def get_blob(sha: str) -> bytes:
        return b.blobs[sha]

    return await judge.judge(b.trajectory(), JudgeContext(get_blob=get_blob, llm=llm))
