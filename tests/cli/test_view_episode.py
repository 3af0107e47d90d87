"""The viewer's episode page against a real ``p2w-rt view`` process: 100-step pages of a long episode read from a
bounded range, step and LLM-call permalinks across pages, per-step time/tokens/cost with unknown prices said so,
ground-truth marks, the prompt diff against another run, and human labels posted from the page (``--annotator``)
that ``p2w-rt agree --human`` reads."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from p2w_rt.replay.classify import ALL_LABELS
from p2w_rt.schemas import LlmCall, LlmUsage, MemoryEntry
from p2w_runtime.domain.trajectory import episode_shape, first_seq_of_step
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.paths import REPO
from tests.helpers.stored_support import run_of_label, stored_events
from tests.helpers.view_support import (
    FAILED_ATTEMPT_STEP,
    HOSTILE,
    LONG_STEPS,
    LONG_TASK,
    TRUTH_ENTRY,
    cli,
    dangling_links,
    event_count,
    fetch,
    serving,
)

pytestmark = pytest.mark.slow
EPISODE = f"run/long/episode/{LONG_TASK}"


def _html(url: str) -> str:
    status, _, body = fetch(url)
    assert status == 200, body[:400]
    return body.decode()


def _json(url: str) -> dict:  # type: ignore[type-arg]
    status, _, body = fetch(url)
    assert status == 200, body[:400]
    return json.loads(body)


def _get_raw(url: str) -> tuple[int, dict[str, str], str]:
    """A GET that does not follow redirects."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.netloc, timeout=60)
    conn.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
    response = conn.getresponse()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()


def _post(url: str, fields: list[tuple[str, str]], origin: str | None = "same") -> tuple[int, dict[str, str], str]:
    """A form post as a browser sends it (``origin="same"``: this viewer's own origin), redirects not followed."""
    parts = urlsplit(url)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = f"http://{parts.netloc}" if origin == "same" else origin
    conn = http.client.HTTPConnection(parts.netloc, timeout=60)
    conn.request("POST", parts.path, body=urlencode(fields), headers=headers)
    response = conn.getresponse()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()


def test_a_long_episode_is_shown_100_steps_a_page_projected_from_that_page_alone(long_url: str) -> None:
    first, second, last = (_json(long_url + f"api/{EPISODE}?page={n}") for n in (1, 2, 3))
    assert [s["number"] for s in first["steps"]] == list(range(1, 101))
    assert [s["number"] for s in second["steps"]] == list(range(101, 201))
    assert [s["number"] for s in last["steps"]] == list(range(201, 251))
    assert {p["pages"] for p in (first, second, last)} == {3} and second["last_step"] == LONG_STEPS
    # each page projects its own steps only (4 events a step, 2 more for the history access at step 150)
    assert second["trajectory"]["event_count"] == 1 + 100 * 4 + 2, "its start, its steps, nothing else"
    assert first["trajectory"]["final_state"] is None and last["trajectory"]["final_state"] is not None
    assert all(p["trajectory"]["end"]["end_reason"] == "answered" for p in (first, second, last))
    html = _html(long_url + f"{EPISODE}?page=2")
    assert re.findall(r'<section class="step" id="step-(\d+)"', html) == [str(n) for n in range(101, 201)]
    assert "page 2 of 3 · steps 101–200 of 250" in html and 'rel="next"' in html and 'rel="prev"' in html
    assert f'href="/run/01long-run/episode/{LONG_TASK}?page=3"' in html and 'name="step"' in html


def test_a_step_permalink_on_another_page_redirects_there_and_bad_pages_are_400(long_url: str) -> None:
    status, headers, _ = _get_raw(long_url + f"{EPISODE}?step=150")
    assert status == 302 and headers["location"].endswith(f"{EPISODE}?page=2")
    status, headers, _ = _get_raw(long_url + f"api/{EPISODE}?step=201")
    assert status == 302 and headers["location"].endswith(f"api/{EPISODE}?page=3"), "the JSON twin stays JSON"
    bad = (("page=4", "?page=4"), ("page=0", "?page=0"), ("step=x", "?step=&#39;x&#39;"), ("page=", "?page"))
    for query, named in bad:
        status, _, body = fetch(long_url + f"{EPISODE}?{query}")
        assert status == 400 and named in body.decode(), (query, body[:300])
    html = _html(long_url + f"{EPISODE}?page=2")
    for n in (101, 150, 200):
        assert f'href="/run/01long-run/episode/{LONG_TASK}?step={n}#step-{n}"' in html
    calls = re.findall(r'<a class="permalink" id="(llm-\d+-\d+)" href="[^"]*\?step=(\d+)#(llm-\d+-\d+)"', html)
    assert len(calls) == 100 and all(a == c and a.split("-")[1] == step for a, step, c in calls)


def test_each_step_shows_its_time_tokens_and_cost_and_an_unknown_price_is_said_so(long_url: str) -> None:
    page = _json(long_url + f"api/{EPISODE}?page=2")
    priced = PriceTable.builtin().cost("gpt-4o-mini", LlmUsage(prompt_tokens=1000, completion_tokens=100))
    assert priced is not None and priced > 0
    odd, even = page["steps"][0], page["steps"][1]  # steps 101 (gpt-4o-mini) and 102 (a model with no price)
    assert odd["tokens"] == 1100 and odd["cost"] == pytest.approx(priced) and odd["unpriced"] == []
    assert even["cost"] == 0 and even["unpriced"] == ["house-model-7b"]
    assert all(s["seconds"] is not None and s["seconds"] >= 0 for s in page["steps"])
    assert page["totals_of"] == "page" and page["llm_totals"]["cost"] == pytest.approx(50 * priced)
    html = _html(long_url + f"{EPISODE}?page=2")
    step_102 = html[html.index('id="step-102"') : html.index('id="step-103"')]
    assert "price unknown (house-model-7b)" in step_102 and "$0.0000" not in step_102
    assert f"${priced:.4f}" in html[html.index('id="step-101"') : html.index('id="step-102"')]
    assert "this page: 100 LLM calls, 110000 tokens" in html
    last = _json(long_url + f"api/{EPISODE}?page=3")
    failed = next(s for s in last["steps"] if s["number"] == FAILED_ATTEMPT_STEP)
    assert len(failed["llm_calls"]) == 2 and failed["unpriced"] == [], "an attempt with no answer is not unpriced"
    assert failed["cost"] == pytest.approx(priced) and failed["llm_calls"][0]["cost"] is None
    html = _html(long_url + f"{EPISODE}?page=3")
    box = html[html.index(f'id="step-{FAILED_ATTEMPT_STEP}"') : html.index(f'id="step-{FAILED_ATTEMPT_STEP + 1}"')]
    assert "no answer" in box and "price unknown" not in box and "timeout" in box


def test_retrieved_entries_stating_the_tasks_ground_truth_are_marked(long_url: str) -> None:
    page = _json(long_url + f"api/{EPISODE}?page=2")
    assert page["truth_targets"] == ["website shop.example", "preference 'size 10'"]
    (marked,) = page["truth"].items()
    assert marked[0].endswith("#1") and marked[1] == ["website shop.example", "preference 'size 10'"]
    html = _html(long_url + f"{EPISODE}?page=2")
    rows = re.findall(r"<tr( class=\"truth\")?><td class=\"num\">(\d)</td>.*?</tr>", html)
    assert rows == [(' class="truth"', "1"), ("", "2")], "the first hit states the truth, the second does not"
    assert TRUTH_ENTRY in html and "ground truth: website shop.example; preference &#39;size 10&#39;" in html


def test_a_short_episode_is_one_page_with_every_event_as_before(demo: Path) -> None:
    with serving(demo, cwd=demo.parent) as url:
        page = _json(url + "api/run/earlier/episode/Lena_Fischer_B1")
        status, headers, _ = _get_raw(url + "run/earlier/episode/Lena_Fischer_B1?step=3")
    assert page["pages"] == 1 and page["totals_of"] == "episode" and page["page"] == 1
    stored = {e.event_id for e in stored_events(demo, prefix=f"{run_of_label(demo, 'earlier')}/Lena_Fischer_B1")}
    assert set(page["event_ids"]) == stored, "a one-page episode reads its whole stream"
    assert page["trajectory"]["event_count"] == len(stored)
    assert status == 302 and headers["location"].endswith("?page=1")


async def _diverging_runs(db: Path) -> None:
    """Two runs of one task: the same step 1, then at step 2 prompts that differ (one with hostile text)."""
    async with open_store(db) as store:
        for run_id, label, prompt, action in (
            ("01a-run", "a", "choose the cheapest", "click"),
            ("01b-run", "b", f"choose the blue one {HOSTILE}", "type"),
        ):
            b = EpisodeBuilder(run_id, "Diff_Persona_A1", query="buy shoes")
            for step in (1, 2):
                b.observation(step, f"https://shop.example/{step}", title=f"page {step}")
                text = "same prompt" if step == 1 else prompt
                b.writer.add(
                    LlmCall(
                        role="planner",
                        model="gpt-4o-mini",
                        step=step,
                        messages=[{"role": "system", "content": "plan well"}, {"role": "user", "content": text}],
                        response=f"{action} [{step}]",
                        latency_s=0.1,
                        fingerprint=f"{step:064x}",
                        ordinal=0,
                    )
                )
                typed = ["x", "0"] if action == "type" and step == 2 else []
                b.action(step, "click" if step == 1 else action, str(step), *typed)
            b.finish("answered", "ok", steps=2)
            await store.append([run_started(run_id, label)])
            await store.append(*b.writer.take())
            await store.append([run_finished(run_id, 1)])


def test_the_prompt_diff_against_another_run_shows_the_first_divergent_steps_prompts_escaped(tmp_path: Path) -> None:
    db = tmp_path / "diff.db"
    asyncio.run(_diverging_runs(db))
    with serving(db, cwd=tmp_path) as url:
        html = _html(url + "run/a/episode/Diff_Persona_A1?against=b")
        data = _json(url + "api/run/a/episode/Diff_Persona_A1?against=b")
        unknown = fetch(url + "run/a/episode/Diff_Persona_A1?against=nope")
    diff = data["prompt_diff"]
    assert diff["divergence"]["step"] == 2 and diff["episode_id"] == "Diff_Persona_A1"
    (call,) = diff["calls"]
    changed = [(kind, line) for kind, line in call["lines"] if kind in "+-"]
    assert changed == [("-", "-choose the cheapest"), ("+", f"+choose the blue one {HOSTILE}")]
    assert 'First divergent step: <a href="#step-2">step 2</a>' in html
    assert '<span class="ddel">-choose the cheapest</span>' in html
    assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in html and "<script>alert" not in html
    assert unknown[0] == 404 and b"nope" in unknown[2]


def _form_token(html: str) -> str:
    found = re.search(r'<input type="hidden" name="token" value="([^"]+)">', html)
    assert found, "the episode page of an annotating viewer has the label form"
    return found.group(1)


def test_labels_posted_from_the_episode_page_are_what_agree_reads(demo: Path, tmp_path: Path) -> None:
    db = tmp_path / "labels.db"
    shutil.copy(demo, db)
    page = "run/earlier/episode/Lena_Fischer_B1"
    with serving(db, cwd=tmp_path) as url:
        read_only = _html(url + page)
        refused = _post(url + "label/earlier/Lena_Fischer_B1", [("p_web", "1")])
    assert 'class="label-form"' not in read_only and refused[0] == 403 and "--annotator" in refused[2]
    with serving(db, "--annotator", "ana", cwd=tmp_path) as url:
        token = _form_token(_html(url + page))
        target = url + "label/earlier/Lena_Fischer_B1"
        good = [("token", token), ("p_web", "1"), ("p_pref", "0.5"), ("intent", "0.5"), ("error", "max_steps")]
        before = event_count(db)
        for fields, origin, status, says in (
            ([*good[:1], ("p_web", "1.5")], "same", 400, "form field &#39;p_web&#39;: field &#39;label&#39;: 1.5"),
            ([*good[:1], ("p_pref", "lots")], "same", 400, "form field &#39;p_pref&#39;"),
            ([*good[:1], ("error", "bored")], "same", 400, "form field &#39;error&#39;: &#39;bored&#39;"),
            ([*good[:1], ("p_web", "1"), ("p_web", "0")], "same", 400, "form field &#39;p_web&#39; is given 2"),
            ([("token", "forged"), *good[1:]], "same", 403, "token"),
            (good, "http://evil.example", 403, "evil.example"),
            ([*good, ("note", "x" * 100_000)], "same", 400, "more than a label form"),
            ([*good, ("note", "hi")], "same", 400, "form field &#39;note&#39; is not a field"),
            ([*good, ("page", "0")], "same", 400, "?page=0: must be at least 1"),
            ([*good, ("page", "abc")], "same", 400, "?page=&#39;abc&#39;: not a whole number"),
        ):
            got = _post(target, fields, origin)
            assert got[0] == status and says in got[2], (fields, got[0], got[2][-600:])
        assert event_count(db) == before, "a refused form records nothing"
        status, headers, _ = _post(target, good)
        assert status == 303 and headers["location"].endswith(f"{page}?labelled=written#label-form")
        saved = _html(url + f"{page}?labelled=written")
        assert "Saved as a judgment by human:ana" in saved
        assert '<option value="1.0" selected>' in saved and 'placeholder="0–1" value="0.5">' in saved
        assert 'value="max_steps" checked' in saved, "the form shows what is recorded"
        assert 'value="error" checked' not in saved
        written = event_count(db)
        again = _post(target, good)
        assert again[0] == 303 and again[1]["location"].endswith("labelled=already#label-form")
        assert event_count(db) == written, "the same labels twice write nothing, as import-labels"
    same = [("p_web", 1.0), ("p_pref", 0.5), ("intent", 0.5)] + [
        (f"error.{x}", int(x == "max_steps")) for x in ALL_LABELS
    ]
    labels = tmp_path / "same.csv"
    labels.write_text(
        "run,task,point,label,annotator\n" + "".join(f"earlier,Lena_Fischer_B1,{p},{v},ana\n" for p, v in same)
    )
    imported = cli("--db", str(db), "import-labels", str(labels), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "0 judgments written, 1 already there" in imported.stdout, "the form's labels are import-labels' own"
    agree = cli("--db", str(db), "agree", "earlier", "--judge", "rubric-rules", "--human", "--json", cwd=tmp_path)
    assert agree.returncode == 0, agree.stderr
    assert "human:ana" in agree.stdout


LABELLED = {
    # task: (success, P_web, P_pref, Intent, error labels seen)
    "Lena_Fischer_A1": ("1", "1", "1", "1", ()),
    "Lena_Fischer_B1": ("0", "0.5", "0.5", "0.5", ("history_utilization_failure",)),
    "Tomas_Reyes_B1": ("1", "0", "0", "0.5", ("personalization_hallucination", "max_steps")),
    "Priya_Raman_A1": ("0", "1", "0.5", "1", ()),
}


def test_a_viewer_label_and_the_same_label_from_a_csv_give_the_same_agree_output(demo: Path, tmp_path: Path) -> None:
    by_form, by_file = tmp_path / "form.db", tmp_path / "file.db"
    shutil.copy(demo, by_form)
    shutil.copy(demo, by_file)
    with serving(by_form, "--annotator", "ana", cwd=tmp_path) as url:
        for task, (success, p_web, p_pref, intent, errors) in LABELLED.items():
            token = _form_token(_html(url + f"run/earlier/episode/{task}"))
            fields = [("token", token), ("success", success), ("p_web", p_web), ("p_pref", p_pref)]
            fields += [("intent", intent), *(("error", x) for x in errors)]
            assert _post(url + f"label/earlier/{task}", fields)[0] == 303
        card = _html(url + "run/earlier/episode/Tomas_Reyes_B1")
        side = _json(url + "api/run/earlier/judges/Tomas_Reyes_B1")
        assert side["raters"] == ["rubric-rules", "human:ana", "classify:rules"], side["raters"]
        rows = {(r["kind"], r["name"]): [c and c["value"] for c in r["cells"]] for r in side["rows"]}
        assert rows[("metric", "success")][1] == 1.0 and rows[("error label", "max_steps")][1:] == [1.0, 0.0]
        assert rows[("error label", "personalization_hallucination")][1] == 1.0
        assert fetch(url + "run/earlier/judges/nope")[0] == 404 and '/judges/Tomas_Reyes_B1">side by side' in card
    mine = card[card.index("<h3>human:ana") :]
    mine = mine[: mine.index("</div>")]
    assert "<small>labels · ok" in mine and "vlabels" not in mine
    assert "success <b>yes</b>" in mine and "0.0/1.0" not in mine and "error." not in mine
    assert '<span class="label">max_steps</span>' in mine and "(of 11 looked for)" in mine
    rows = ["run,task,point,label,annotator"]  # the README's import-labels format
    for task, (success, p_web, p_pref, intent, errors) in LABELLED.items():
        rows += [f"earlier,{task},{p},{v},ana" for p, v in (("success", success), ("p_web", p_web))]
        rows += [f"earlier,{task},{p},{v},ana" for p, v in (("p_pref", p_pref), ("intent", intent))]
        rows += [f"earlier,{task},error.{x},{'yes' if x in errors else 'no'},ana" for x in ALL_LABELS]
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(rows) + "\n")
    imported = cli("--db", str(by_file), "import-labels", str(labels), cwd=tmp_path)
    assert imported.returncode == 0 and "4 judgments written" in imported.stdout, imported.stderr
    agree = ["agree", "earlier", "--judge", "rubric-rules", "--human"]
    outputs = []
    for db in (by_form, by_file):
        done = cli("--db", str(db), *agree, cwd=tmp_path)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1], "one label model for both routes"
    text = outputs[0]
    assert "rubric-rules vs human:ana" in text and "metric:success" in text
    assert "success verdict changed on" in text
    assert "human:ana vs classify:rules" in text and "point:error.max_steps" in text
    assert "rubric-rules vs classify:rules" not in text, "a classifier is compared on error labels only"
    as_json = json.loads(cli("--db", str(by_form), *agree, "--json", cwd=tmp_path).stdout)
    pair = next(p for p in as_json["pairs"] if p["b"] == "classify:rules")
    kappas = {i["item"]: i for i in pair["items"]}
    assert set(kappas) >= {f"point:error.{x}" for x in ALL_LABELS}, sorted(kappas)


def test_the_annotator_name_is_checked_as_a_label_files_and_export_has_no_form(demo: Path, tmp_path: Path) -> None:
    bad = cli("view", "--db", str(demo), "--annotator", "ana@2", cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--annotator: field 'annotator'" in bad.stderr
    both = cli(
        "view", "--db", str(demo), "--annotator", "ana", "--export", str(tmp_path / "x"), "earlier", cwd=tmp_path
    )
    assert both.returncode == 2 and "--annotator" in both.stderr


def test_the_static_export_writes_every_page_of_a_long_episode(long_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = cli("view", "--db", str(long_db), "--export", str(out), "long", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pages = sorted(p.name for p in out.glob("episode-*.html"))
    assert len(pages) == 3 and [p for p in pages if p.endswith(("-p2.html", "-p3.html"))]
    missing = dangling_links(out)
    assert not missing, missing[:5]
    second = next(out.glob("episode-*-p2.html")).read_text()
    assert 'id="step-150"' in second and "-p2.html#step-150" in second and 'class="label-form"' not in second


async def _with_unstepped_history(db: Path) -> str:
    """An imported-style episode: memory accesses without a step first, then 300 steps; unfinished (no tail)."""
    b = EpisodeBuilder("01imp-run", "Imp_Persona_A1", query="q")
    for i in range(3):
        q = b.history_query(f"question {i}")
        b.retrieval(q, f"question {i}", [MemoryEntry(timestamp="2024", type="visit", object="x", website="y")])
    for step in range(1, 301):
        b.observation(step, f"https://shop.example/{step}")
        b.action(step, "click", str(step))
    async with open_store(db) as store:
        await store.append([run_started("01imp-run", "imp")])
        await store.append(*b.writer.take())
    return b.stream


def test_the_range_search_passes_over_steps_without_a_number_and_an_unfinished_episode_has_no_tail(
    tmp_path: Path,
) -> None:
    async def check() -> None:
        db = tmp_path / "imp.db"
        stream = await _with_unstepped_history(db)
        async with open_store(db) as store:
            shape = await episode_shape(store, stream)
            assert shape is not None and shape.last_step == 300 and shape.tail_from == shape.head.last_seq + 1
            for step in (1, 101, 300, 301):
                seq = await first_seq_of_step(store, stream, step, 2, shape.tail_from)
                event = await store.read_event(stream, seq)
                before = await store.read_event(stream, seq - 1)
                if step == 1:  # the memory accesses without a step lead into step 1
                    assert seq == 2
                    continue
                assert event is None if step == 301 else event.payload["step"] == step  # type: ignore[union-attr]
                assert before is not None and before.payload["step"] == step - 1
            assert await episode_shape(store, "01imp-run/nothing") is None

    asyncio.run(check())


def test_a_bad_price_file_stops_the_viewer_in_one_line_before_it_serves(demo: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO), "P2W_PRICES": str(tmp_path / "missing.json")}
    result = subprocess.run(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", "view", "--db", str(demo), "--port", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: cannot read price file {tmp_path / 'missing.json'}: No such file or directory"
    ]
