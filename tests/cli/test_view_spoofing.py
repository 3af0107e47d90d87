"""Nothing passes for the viewer or for what was recorded: a web page that makes its own host name resolve to the
viewer's loopback address (DNS rebinding) reads no run and posts no label, and recorded text holding control
characters or a bidi override is shown spelled out, so it cannot reverse the URL or answer printed after it.

Each viewer is a ``p2w-rt view`` process; the hostile run is recorded through the recording API, as an outside
agent records one.
"""

from __future__ import annotations

import asyncio
import http.client
import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from p2w_runtime.recording import ParsedAction, open_run, open_store
from tests.helpers.view_support import cli, event_count, fetch, serving

pytestmark = pytest.mark.slow

RUN = "earlier"
EPISODE = "Priya_Raman_C1"
REBOUND = "rebind.attacker.example"
RLO = "\u202e"
TITLE = f"Shop {RLO}DELIAF KSAT\x1b[2J"
URL = f"https://shop.example/{RLO}kcehc"
ANSWER = f"bought it {RLO}dias tnega eht"


def _request(url: str, path: str, host: str, *, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a request to the viewer at ``url`` that names ``host`` (port kept) in ``Host``,
    as a browser sends it for a page whose name resolves to the viewer's address."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"Host": f"{host}:{parts.port}"}
    if body is not None:
        headers |= {"Origin": f"http://{host}:{parts.port}", "Content-Type": "application/x-www-form-urlencoded"}
    try:
        conn.request("POST" if body is not None else "GET", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _token(html: bytes) -> str:
    found = re.search(r'name="token" value="([^"]+)"', html.decode())
    assert found, "the episode page of a viewer with --annotator has the label form"
    return found.group(1)


def test_a_request_naming_another_host_reads_no_run_and_posts_no_label(demo_copy: Path, tmp_path: Path) -> None:
    episode = f"/run/{RUN}/episode/{EPISODE}"
    with serving(demo_copy, "--annotator", "ana", cwd=tmp_path) as url:
        status, headers, body = _request(url, episode, REBOUND)
        assert status == 403 and b'name="token"' not in body and EPISODE.encode() not in body
        assert f"Host '{REBOUND}:".encode() in body and body.count(b"\n") == 1, "one line naming the host"
        assert headers["content-type"].startswith("text/plain")
        status, headers, body = _request(url, "/api/runs", REBOUND)
        assert status == 403 and headers["content-type"] == "application/json" and b"scripted-gpt" not in body

        token = _token(fetch(url + episode.lstrip("/"))[2])  # what the rebound page would read without the check
        before = event_count(demo_copy)
        form = f"token={token}&success=1&p_web=1".encode()
        status, _, _ = _request(url, f"/label/{RUN}/{EPISODE}", REBOUND, body=form)
        assert status == 403 and event_count(demo_copy) == before, "no label recorded from another host"

        for loopback in ("localhost", "127.0.0.1", "LOCALHOST"):  # the viewer's own names are served
            assert _request(url, episode, loopback)[0] == 200
        status, headers, _ = _request(url, f"/label/{RUN}/{EPISODE}", "localhost", body=form)
        assert status == 303 and "labelled=written" in headers["location"] and event_count(demo_copy) > before


@dataclass(frozen=True)
class _Task:
    task_id: str
    persona: str = "Mallory"
    query_set: str = "Mallory_Q_A"
    level: int | None = 1
    intent: str = f"find a gift {RLO}tfig"
    start_url: str = "https://shop.example/"
    ground_truth: None = None


async def _record_hostile_run(db: Path) -> None:
    """One episode whose page title, URL, rationale and answer hold a bidi override (and the title an ESC)."""
    tasks = [_Task("Mallory_Q_A1")]
    async with open_store(db) as store:
        run = await open_run(store, label="bidi", agent="outside", model="m", tasks=tasks, carried=False)
        async with run, run.episode(tasks[0]) as episode:
            await episode.observe(url=URL, title=TITLE)
            await episode.rationale(f"click {RLO}kcilc")
            await episode.action("stop [done]", ParsedAction(name="stop", args=["done"]), status="executed")
            await episode.final_state(url=URL, title=TITLE)
            await episode.end("answered", answer=ANSWER)


def _spelled_out(html: str, where: str) -> None:
    assert RLO not in html and "\x1b" not in html, f"{where}: a raw bidi override or ESC reaches the page"
    assert "\\u202e" in html, f"{where}: the override is shown spelled out"


def test_bidi_overrides_and_control_characters_in_recorded_text_are_spelled_out(tmp_path: Path) -> None:
    db = tmp_path / "bidi.db"
    asyncio.run(_record_hostile_run(db))
    with serving(db, cwd=tmp_path) as url:
        runs = fetch(url)[2].decode()
        run_path = re.search(r'href="/(run/[^"/]+)"', runs)
        assert run_path, runs[:500]
        run = fetch(url + run_path.group(1))[2].decode()
        _spelled_out(run, "run page")
        episode = fetch(url + f"{run_path.group(1)}/episode/Mallory_Q_A1")[2].decode()
        _spelled_out(episode, "episode page")
        assert "Shop \\u202eDELIAF KSAT\\x1b[2J" in unescape(episode) and "bought it \\u202edias" in unescape(episode)
        assert f'href="{URL}' not in episode and "https://shop.example/\\u202ekcehc" in episode, "shown, not linked"
        found = fetch(url + f"search?q={quote('gift')}")[2].decode()
        _spelled_out(found, "search page")
    out = tmp_path / "export"
    done = cli("--db", str(db), "view", "--export", str(out), "bidi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pages = {page.name: page.read_text() for page in out.glob("*.html")}
    assert not [name for name, html in pages.items() if RLO in html or "\x1b" in html], "exported pages spell them too"
    _spelled_out(next(html for name, html in pages.items() if name.startswith("episode-")), "exported episode page")
