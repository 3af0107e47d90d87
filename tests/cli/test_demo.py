"""`p2w-rt demo`: the README's main command, offline on the bundled runs, and with --record on a scripted endpoint."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.store import import_bundle, open_store
from p2w_runtime.testing import ScriptedLlm, Text, system_contains
from p2w_runtime.testing.sample_agent import EXAMPLE_RUN_SLIPS, SampleAgentScript

JUDGE_MARKER = "(role: judge)"
BOX_DRAWING = re.compile("[\u2500-\u257f]")


def _cells(line: str) -> list[str]:
    """One pipe-table row's cells, unescaped as GitHub reads them (``\\x`` is ``x``; an unescaped ``|`` splits)."""
    assert line.startswith("|") and line.endswith("|") and not line.endswith("\\|"), line
    cells, current, chars = [], "", iter(line[1:-1])
    for char in chars:
        if char == "\\":
            current += next(chars)
        elif char == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += char
    return [*cells, current.strip()]


def _pipe_tables(report: str) -> list[list[list[str]]]:
    """Every table of a Markdown report, as rows of cells (header first), checked to be a well-formed pipe table."""
    assert not BOX_DRAWING.search(report), "no box drawings in report.md"
    tables, block = [], []
    for line in [*report.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            header, rule, *rows = block
            assert re.fullmatch(r"\|(---\|)+", rule), f"a --- separator under the header: {rule!r}"
            width = len(_cells(header))
            assert rule.count("---") == width and all(len(_cells(row)) == width for row in rows), block
            tables.append([_cells(header), *map(_cells, rows)])
            block = []
    return tables


def test_demo_judges_classifies_diffs_and_writes_a_report(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for heading in ("Metrics (rubric-rules)", "Personalization errors", "What changed from earlier to later"):
        assert heading in result.output

    def flip(task: str) -> str | None:
        found = re.search(rf"│ {task}\s+│ (gained|lost)\s+│", result.output)
        return found.group(1) if found else None

    assert flip("Tomas_Reyes_B1") == "gained", "the later run fixed the no-history slip"
    assert flip("Marcus_Okafor_C1") == "gained", "the later run fixed the wrong item (Intent 0 -> 10)"
    assert flip("Lena_Fischer_A1") == "gained", "the later run did not stop on the results page"
    assert flip("Tomas_Reyes_A1") == "gained" and flip("Priya_Raman_B1") == "lost", "bot walls"
    assert re.search(r"│ earlier │ .* │  0\.750 │ 0\.625 │  24/24 │", result.output), "Intent and SR of E.3"
    assert re.search(r"│ later   │ .* │  0\.896 │ 0\.875 │  24/24 │", result.output)
    by_level = re.findall(r"│ (earlier|later) +│ .* │ ([12]) +│ (\d\.\d+) │", result.output)
    assert by_level == [
        ("earlier", "1", "0.667"),
        ("earlier", "2", "0.583"),
        ("later", "1", "0.917"),
        ("later", "2", "0.833"),
    ], "the most ambiguous level fails more often: the levels differ"
    divergences = result.output.split("take the same actions")[1]
    assert "…" not in divergences, "long actions fold, so two different actions never read the same"
    assert "ime=19:00&party=4]" in divergences, "the end of Priya_Raman_B1's goto URL is shown"
    assert "…" not in result.output, "no view cuts a cell"
    report = (out / "report.md").read_text()
    assert "| earlier | scripted-gpt | on-demand |" in report and "![Error types by run](errors.png)" in report
    assert (out / "levels.png").read_bytes()[:4] == b"\x89PNG" and (out / "errors.png").read_bytes()[:4] == b"\x89PNG"
    db = out / "demo.db"
    assert CliRunner().invoke(main, ["--db", str(db), "verify"]).exit_code == 0
    shown = CliRunner().invoke(main, ["--db", str(db), "show", "earlier", "Tomas_Reyes_B1"]).output
    assert "rubric-rules" in shown and "web.retrieval" in shown and "0/5" in shown, "judgment points with evidence"
    assert "personalization_hallucination" in shown and "size=10.5" in shown, "classification labels with evidence"
    diff = CliRunner().invoke(main, ["--db", str(db), "diff", "earlier", "later", "--json"])
    body = json.loads(diff.output)
    assert body["metrics"]["success_rate"]["delta"] > 0 and not body["only_in_a"] and not body["only_in_b"]
    assert "imported the example runs earlier, later into" in result.output
    assert "By ambiguity level (1 = partly ambiguous, 2 = most ambiguous)" in result.output, "no level 0 named"
    again = CliRunner().invoke(main, ["demo", "--out", str(out)], catch_exceptions=False)
    assert again.exit_code == 0, "a second demo reuses the database holding only its own runs"
    assert (
        "imported the example" not in again.output
        and "are already in" in again.output
        and "nothing imported" in again.output
    )
    runs = CliRunner().invoke(main, ["--db", str(db), "runs", "--json"])
    assert [json.loads(line)["label"] for line in runs.output.splitlines()] == ["earlier", "later"]


def test_the_demo_report_holds_every_view_as_a_markdown_pipe_table_with_cells_whole(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert CliRunner().invoke(main, ["demo", "--out", str(out)], catch_exceptions=False).exit_code == 0
    report = (out / "report.md").read_text()
    assert str(tmp_path) not in report and "Database: `demo.db`" in report, "the report names no path of the machine"
    tables = _pipe_tables(report)
    assert [t[0][0] for t in tables] == ["run", "run", "error", "", "task", "task", "task"], "metrics, errors, diff"
    errors = tables[2]
    assert errors[0][1] == "earlier<br>p2w-rt / scripted-gpt / on-demand (n=24)", "a two-line header on one line"
    assert ["blocked", "2", "1"] in errors
    divergences = {row[0]: row for row in tables[6][1:]}
    url = "goto [http://tablefor.p2w.test/reserve?restaurant=tf-a01&date=2026-12-05&time=19:00&party=4]"
    assert divergences["Priya_Raman_B1"][3] == url, "a long action URL is one whole cell"
    assert divergences["Lena_Fischer_A1"][2].endswith("Gluten-Free Brown Rice Penne]")
    assert "success flips: 7 gained, 1 lost" in report, "lines between the tables are paragraphs"


FINAL_PAGES = {"threads": "/cart", "basket": "/cart", "tablefor": "/reserve", "stagepass": "/checkout"}


def test_the_example_runs_do_the_tasks_except_where_they_slipped(tmp_path: Path) -> None:
    async def ends() -> dict[str, dict[str, dict]]:
        out: dict[str, dict[str, dict]] = {}
        async with open_store(tmp_path / "examples.db") as store:
            labels = {(await import_bundle(store, b)).run_id: b.stem for b in example_run_bundles()}
            async for event in store.read_all(types=["episode.finished"]):
                run_id, task = event.stream.split("/")
                out.setdefault(labels[run_id], {})[task] = json.loads(event.payload_json)
        return out

    checks = sample_checks()
    for label, episodes in asyncio.run(ends()).items():
        assert len(episodes) == 24, label
        for task, end in episodes.items():
            slips, query_set = EXAMPLE_RUN_SLIPS[label], task[:-1]
            slip = slips.get(task, slips.get(query_set))
            final = urlsplit(end["final_url"])
            site = checks[query_set]["website"].split(".")[0]
            if slip == "blocked":
                assert end["end_reason"] == "blocked" and "HTTP 403" in end["detail"], (label, task)
                continue
            assert end["end_reason"] == "answered", (label, task)
            if slip == "stops_early":
                assert end["final_url"] == checks[query_set]["target_url"], (label, task)
            elif slip == "wrong_site":
                assert final.hostname != checks[query_set]["website"], (label, task)
            else:  # done, right or (wrong_item) wrong: the item in the cart, the reservation details, the checkout
                assert final.hostname == checks[query_set]["website"], (label, task)
                assert final.path == FINAL_PAGES[site], (label, task)


def _judge(request: dict[str, Any]) -> Text:
    """A judge model giving every criterion its maximum."""
    top = {"web": 5, "pref": 2.5, "location": 2.5, "intent": 10}
    fields = request["response_format"]["json_schema"]["schema"]["properties"]
    body = {name: {"score": top[name.split("_")[0]], "evidence": ["E1"], "justification": "ok"} for name in fields}
    return Text(json.dumps(body))


def test_demo_record_records_the_sample_tasks_and_judges_them_with_the_llm(
    tmp_path: Path, scripted_llm: ScriptedLlm, monkeypatch
) -> None:
    agent = SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())
    scripted_llm.rule(system_contains(JUDGE_MARKER), _judge)
    scripted_llm.handle_with(agent)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo-test-key-0123456789")
    out = tmp_path / "demo"
    result = CliRunner().invoke(
        main, ["demo", "--out", str(out), "--record", "--model", "scripted|model"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "## Metrics (rubric-llm)" in report and "| recorded-scripted\\|model | scripted\\|model |" in report
    tables = _pipe_tables(report)
    assert tables[0][3][:2] == ["recorded-scripted|model", "scripted|model"], "a | in recorded text stays in its cell"
    judged = [r for r in scripted_llm.chat_requests if JUDGE_MARKER in r["messages"][0]["content"]]
    assert len(judged) == 24, "every recorded ambiguous episode judged once by the LLM judge"
    assert b"sk-demo-test-key-0123456789" not in (out / "demo.db").read_bytes()


def _runs(db: Path) -> list[str]:
    listed = CliRunner().invoke(main, ["--db", str(db), "runs", "--json"])
    return [json.loads(line)["label"] for line in listed.output.splitlines()]


def test_demo_refuses_to_replace_a_database_holding_a_users_run_and_force_replaces_it(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    out.mkdir()
    db = out / "demo.db"
    mine = CliRunner().invoke(
        main, ["--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam"]
    )
    assert mine.exit_code == 0, mine.output
    before = db.read_bytes()
    refused = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert refused.exit_code != 0
    assert refused.stderr.strip().splitlines() == [
        f"error: {db} holds runs the demo did not make (examples-agentoccam); use --out NEW_FOLDER, or --force to "
        "replace it"
    ]
    assert db.read_bytes() == before and _runs(db) == ["examples-agentoccam"]
    assert not (out / "report.md").exists()
    replaced = CliRunner().invoke(main, ["demo", "--out", str(out), "--force"])
    assert replaced.exit_code == 0, replaced.output
    assert _runs(db) == ["earlier", "later"]


def test_demo_refuses_a_file_that_is_not_a_database_and_leaves_it(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    out.mkdir()
    (out / "demo.db").write_text("my notes, not a database\n" * 10)
    refused = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert refused.exit_code != 0
    assert refused.stderr.strip().splitlines() == [
        f"error: {out / 'demo.db'}: not a SQLite database; use --out NEW_FOLDER, or --force to replace it"
    ]
    assert (out / "demo.db").read_text() == "my notes, not a database\n" * 10


def test_demo_refuses_the_global_db_rather_than_ignoring_it_and_its_hints_paste(tmp_path: Path) -> None:
    """The demo writes OUT/demo.db only (it may replace it): ``--db`` naming another store is refused, not ignored,
    and P2W_DB, a default for every command, is left alone; the commands it suggests name its database quoted."""
    mine, out = tmp_path / "mine.db", tmp_path / "my demo"
    refused = CliRunner().invoke(main, ["--db", str(mine), "demo", "--out", str(out)])
    assert refused.exit_code == 2 and "demo keeps its own database, OUT/demo.db: choose its folder with --out" in (
        refused.stderr
    )
    assert not mine.exists() and not out.exists()
    result = CliRunner(env={"P2W_DB": str(mine)}).invoke(main, ["demo", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not mine.exists() and _runs(out / "demo.db") == ["earlier", "later"]
    show = re.search(r"try `(.*)`\)", result.stdout)
    view = re.search(r"open it in a browser: (.*)", result.stdout)
    assert show is not None and view is not None, result.stdout
    assert shlex.split(show.group(1)) == ["p2w-rt", "--db", str(out / "demo.db"), "show", "earlier"]
    assert shlex.split(view.group(1)) == ["p2w-rt", "view", "--db", str(out / "demo.db"), "--open"]
