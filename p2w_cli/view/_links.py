"""Where each page lives: URLs of the running app, or relative file names of a static export.

Templates only ever call ``links.*``, so the same templates render both, and the export learns
which blobs its pages refer to.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import quote, urlencode

from p2w_cli.view._clip import text_sha


class ServerLinks:
    """Paths of the ASGI app."""

    static_export = False

    def runs(self) -> str:
        return "/"

    def run(self, run_id: str, **query: object) -> str:
        kept = {k: v for k, v in query.items() if v not in (None, "")}
        return f"/run/{quote(run_id, safe='')}" + (f"?{urlencode(kept)}" if kept else "")

    def episode(self, run_id: str, episode_id: str, **query: object) -> str:
        """``page`` (1 is left out), ``against``, ``step``: the episode page's parameters."""
        kept = {k: v for k, v in query.items() if v not in (None, "") and not (k == "page" and v == 1)}
        path = f"/run/{quote(run_id, safe='')}/episode/{quote(episode_id, safe='')}"
        return path + (f"?{urlencode(kept)}" if kept else "")

    def step(self, run_id: str, episode_id: str, number: int | None, page: int) -> str:
        """A step's permalink without its fragment: ``?step=N`` finds its page whatever the page size."""
        return self.episode(run_id, episode_id, step=number) if number is not None else self.episode(run_id, episode_id)

    def judges(self, run_id: str, episode_id: str) -> str:
        """The episode's judges side by side (the server only: the export has no such page)."""
        return f"/run/{quote(run_id, safe='')}/judges/{quote(episode_id, safe='')}"

    def label(self, run_id: str, episode_id: str) -> str:
        """Where the episode page's label form posts (``view --annotator``)."""
        return f"/label/{quote(run_id, safe='')}/{quote(episode_id, safe='')}"

    def blob(self, sha: str, ext: str = "txt") -> str:
        return f"/blob/{sha}"

    def dom(self, sha: str) -> str:
        return f"/dom/{sha}"

    def text(self, run_id: str, episode_id: str, page: int, text: str) -> str:
        """The whole of a recorded value that page ``page`` of the episode shows clipped (``_clip.py``)."""
        query = urlencode({"page": page, "sha": text_sha(text)})
        return f"/run/{quote(run_id, safe='')}/text/{quote(episode_id, safe='')}?{query}"

    def plot(self, run_id: str, name: str) -> str:
        return f"/run/{quote(run_id, safe='')}/plot/{name}.png"

    def compare(self, a: str, b: str, judge: str = "") -> str:
        return "/compare?" + urlencode({k: v for k, v in {"a": a, "b": b, "judge": judge}.items() if v})

    def static(self, name: str) -> str:
        return f"/static/{name}"

    def search(self, **query: object) -> str:
        kept = {k: v for k, v in query.items() if v not in (None, "")}
        return "/search" + (f"?{urlencode(kept)}" if kept else "")

    def live(self, run_id: str) -> str:
        """What a recording run's page polls."""
        return f"/api/run/{quote(run_id, safe='')}/live"

    def runs_live(self) -> str:
        """What the runs page polls while a listed run is recording."""
        return "/api/runs/live"


def _safe_name(text: str) -> str:
    """A file name for any episode id: readable part plus a short hash, so distinct ids never collide."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:60]
    return f"{readable}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


class ExportLinks:
    """Relative file names of a static export (every page in the export's root folder)."""

    static_export = True

    def __init__(self, run_ids: set[str]) -> None:
        self.run_ids = run_ids
        self.blobs: dict[str, str] = {}
        """sha -> the file its pages link to."""
        self.doms: set[str] = set()
        """Recorded pages, written with a CSP of their own."""
        self.plots: set[tuple[str, str]] = set()
        self.texts: dict[str, str] = {}
        """sha -> a recorded value the pages show clipped, written whole beside them."""

    def runs(self) -> str:
        return "index.html"

    def run(self, run_id: str, **query: object) -> str:
        return f"run-{_safe_name(run_id)}.html" if run_id in self.run_ids else "index.html"

    def episode(self, run_id: str, episode_id: str, page: int = 1, **query: object) -> str:
        """Page ``page`` of the episode; the server's other parameters (``against``) have no file."""
        suffix = f"-p{page}" if page != 1 else ""
        return f"episode-{_safe_name(run_id + '/' + episode_id)}{suffix}.html"

    def step(self, run_id: str, episode_id: str, number: int | None, page: int) -> str:
        return self.episode(run_id, episode_id, page)

    def blob(self, sha: str, ext: str = "txt") -> str:
        """``ext`` names the file, so a browser opening it from disk knows its type."""
        self.blobs.setdefault(sha, f"blobs/{sha}.{ext}")
        return f"blobs/{sha}.{ext}"

    def dom(self, sha: str) -> str:
        self.doms.add(sha)
        return f"dom/{sha}.html"

    def text(self, run_id: str, episode_id: str, page: int, text: str) -> str:
        sha = text_sha(text)
        self.texts.setdefault(sha, text)
        return f"texts/{sha}.txt"

    def plot(self, run_id: str, name: str) -> str:
        self.plots.add((run_id, name))
        return f"plots/{_safe_name(run_id)}-{name}.png"

    def compare(self, a: str, b: str, judge: str = "") -> str:
        """Compare pages exist for the pairs the export wrote (consecutive runs, the default judge)."""
        return f"compare-{_safe_name(a)}-{_safe_name(b)}.html"

    def static(self, name: str) -> str:
        return f"static/{name}"


Links = ServerLinks | ExportLinks
