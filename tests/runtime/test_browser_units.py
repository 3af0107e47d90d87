"""The browser layer's pure parts: snapshot rendering and bounding, HAR scrubbing, finding Chromium."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from p2w_runtime.browser import BrowserUnavailable, find_chromium
from p2w_runtime.browser._axtext import bound_text, lines_to_text, render_snapshot
from p2w_runtime.browser._har import scrub_har

SNAPSHOT = """\
- generic [active] [ref=e1] [box=8,-992,1264,3332]:
  - 'button "Say \\"hi\\": now" [ref=e2] [box=8,-992,94,21]'
  - generic [ref=e3] [box=8,-960,600,40]:
    - link "home" [ref=e4] [cursor=pointer] [box=8,-960,40,17]:
      - /url: /x
    - paragraph [ref=e5] [box=8,-900,600,18]: "Price: $5 - 'single' \\"double\\" #hash"
  - 'textbox "Search: here" [ref=e6] [box=8,100,177,21]': pre
  - combobox [ref=e7] [box=8,130,80,21]:
    - option "S" [selected]
    - option "M"
  - iframe [ref=e8] [box=8,168,304,154]:
    - button "inside" [ref=f1e2] [box=8,8,51,21]
  - text: plain [text] here
  - link "bottom" [ref=f2e9] [cursor=pointer] [box=8,1322,74,17]:
    - /url: /bottom"""


def render(raw: str = SNAPSHOT) -> tuple[str, dict[str, int]]:
    ids: dict[str, int] = {}
    lines = render_snapshot(raw, lambda ref: ids.setdefault(ref, 100 + len(ids)))
    return lines_to_text(lines), ids


def test_render_numbers_refs_and_unquotes_yaml() -> None:
    text, ids = render()
    assert ids == {
        "e1": 100,
        "e2": 101,
        "e4": 102,
        "e5": 103,
        "e6": 104,
        "e7": 105,
        "e8": 106,
        "f1e2": 107,
        "f2e9": 108,
    }
    assert text.splitlines() == [
        "[100] generic [active]",
        '  [101] button "Say \\"hi\\": now"',
        '  [102] link "home"',
        "    /url: /x",
        "  [103] paragraph: Price: $5 - 'single' \"double\" #hash",
        '  [104] textbox "Search: here": pre',
        "  [105] combobox",
        '    option "S" [selected]',
        '    option "M"',
        "  [106] iframe",
        '    [107] button "inside"',
        "  text: plain [text] here",
        '  [108] link "bottom"',
        "    /url: /bottom",
    ]


def test_anonymous_generic_is_dropped_and_children_move_up() -> None:
    text, ids = render()
    assert "e3" not in ids
    assert '\n  [102] link "home"' in text


def test_render_empty_snapshot() -> None:
    assert render("")[0] == ""


def test_bound_text_keeps_short_trees_whole() -> None:
    text, _ = render()
    lines = render_snapshot(SNAPSHOT, lambda ref: 1)
    assert bound_text(lines, 10_000) == lines_to_text(lines)
    assert "omitted" not in bound_text(lines, len(text))


def test_bound_text_drops_lines_above_the_viewport_first() -> None:
    lines = render_snapshot(SNAPSHOT, lambda ref: int(ref.rsplit("e", 1)[1]))
    full = lines_to_text(lines)
    bounded = bound_text(lines, len(full) - 1)
    assert bounded.startswith("[... 4 lines above the viewport omitted; scroll [up] to see them ...]\n")
    assert '"Say' not in bounded and "/url: /x" not in bounded and "Price" not in bounded
    assert "[1] generic" in bounded and '[6] textbox "Search: here": pre' in bounded
    assert "truncated" not in bounded


def test_bound_text_cuts_the_tail_at_a_line_with_a_marker() -> None:
    lines = render_snapshot(SNAPSHOT, lambda ref: 1)
    bounded = bound_text(lines, 150)
    body, marker = bounded.rsplit("\n", 1)
    assert marker.startswith("[... ") and marker.endswith("more characters truncated; scroll [down] to see more ...]")
    assert len(bounded) <= 150 + len(marker) + 1
    assert all(line in lines_to_text(lines).splitlines() for line in body.splitlines()[1:])


def har_with_secrets() -> bytes:
    entry = {
        "request": {
            "url": "http://shop.p2w.test/account",
            "headers": [
                {"name": "Cookie", "value": "session=SECRET1"},
                {"name": "authorization", "value": "Bearer SECRET2"},
                {"name": "Accept", "value": "text/html"},
            ],
            "cookies": [{"name": "session", "value": "SECRET1"}],
        },
        "response": {
            "status": 200,
            "headers": [{"name": "Set-Cookie", "value": "session=SECRET3"}, {"name": "Content-Type", "value": "x"}],
            "cookies": [{"name": "session", "value": "SECRET3"}],
        },
    }
    return json.dumps({"log": {"version": "1.2", "entries": [entry]}}).encode()


def test_scrub_har_removes_cookies_and_auth_keeps_the_rest() -> None:
    scrubbed = scrub_har(har_with_secrets())
    assert b"SECRET" not in scrubbed
    entry = json.loads(scrubbed)["log"]["entries"][0]
    assert entry["request"]["headers"] == [{"name": "Accept", "value": "text/html"}]
    assert entry["request"]["cookies"] == [] and entry["response"]["cookies"] == []
    assert entry["response"]["headers"] == [{"name": "Content-Type", "value": "x"}]
    assert entry["request"]["url"] == "http://shop.p2w.test/account" and entry["response"]["status"] == 200


def fake_executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_find_chromium_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit, env, bundled, system = (fake_executable(tmp_path / name) for name in ("a", "b", "c", "d"))
    monkeypatch.setenv("P2W_CHROMIUM", str(env))
    assert find_chromium(str(explicit), bundled=str(bundled), system=[str(system)]) == str(explicit)
    assert find_chromium(None, bundled=str(bundled), system=[str(system)]) == str(env)
    monkeypatch.delenv("P2W_CHROMIUM")
    assert find_chromium(None, bundled=str(bundled), system=[str(system)]) == str(bundled)
    assert find_chromium(None, bundled=str(tmp_path / "missing"), system=[str(system)]) == str(system)


def test_find_chromium_uses_path_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("P2W_CHROMIUM", raising=False)
    fake_executable(tmp_path / "my-chromium")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert find_chromium(None, system=["my-chromium"]) == str(tmp_path / "my-chromium")


def test_find_chromium_refuses_a_missing_explicit_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fallback = fake_executable(tmp_path / "fallback")
    with pytest.raises(BrowserUnavailable, match="--chromium '/no/such/chrome': no such executable"):
        find_chromium("/no/such/chrome", system=[str(fallback)])
    monkeypatch.setenv("P2W_CHROMIUM", "/no/such/env-chrome")
    with pytest.raises(BrowserUnavailable, match=r"\$P2W_CHROMIUM '/no/such/env-chrome'"):
        find_chromium(None, system=[str(fallback)])


def test_find_chromium_says_how_to_fix_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("P2W_CHROMIUM", raising=False)
    with pytest.raises(BrowserUnavailable) as info:
        find_chromium(None, bundled=str(tmp_path / "pw-chrome"), system=[str(tmp_path / "none")])
    message = str(info.value)
    assert str(tmp_path / "pw-chrome") in message
    assert "playwright install chromium" in message and "--chromium PATH" in message
