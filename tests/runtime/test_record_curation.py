"""`p2w-rt record --capture-links`: a curation's product links are fetched at the end and recorded as pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.browser import answer_links
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm, Text
from p2w_runtime.testing.sample_agent import SampleAgentScript

LINKS = (
    "http://threads.p2w.test/product/thr-a31",
    "http://threads.p2w.test/product/thr-gone",
    "http://threads.p2w.test/search?q=trail+running",
    "http://threads.p2w.test/product/thr-a32",
)


def test_answer_links_in_the_reference_format_or_as_text() -> None:
    reference = json.dumps({"search_results": [{"product_name": "a", "product_url": u} for u in LINKS]})
    assert answer_links(reference) == list(LINKS[:3])  # AgenticShop judges the first three
    assert answer_links(f"Try {LINKS[0]}, or {LINKS[1]}. Also {LINKS[0]}") == list(LINKS[:2])
    assert answer_links("no links here") == []


def test_curation_episode_records_each_linked_page(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    agent = SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())

    def curate(request: dict) -> Text:  # the sample agent, answering with product links when it stops
        reply = agent(request)
        content = re.sub(r"stop \[[^\]]*\]", "stop [" + " ".join(LINKS) + "]", reply.content)
        return Text(content)

    scripted_llm.handle_with(curate)
    db = tmp_path / "cur.db"
    args = ["--db", str(db), "record", "--model", "m", "--base-url", scripted_llm.base_url, "--api-key", "k"]
    result = CliRunner().invoke(
        main, [*args, "--task", "Priya_Raman_A1", "--capture-links", "--label", "cur"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    shown = CliRunner().invoke(main, ["--db", str(db), "show", "cur", "Priya_Raman_A1", "--json"])
    timeline = [json.loads(line) for line in shown.output.splitlines()]
    captures = [e["payload"] for e in timeline if e["type"] == "page.capture"]
    assert [(c["index"], c["requested_url"], c["status"]) for c in captures] == [
        (0, LINKS[0], 200),
        (1, LINKS[1], 404),
        (2, LINKS[2], 200),
    ]
    assert all(c["dom_html"] and c["screenshot"] for c in captures)
    assert [e["type"] for e in timeline][-2:] == ["final_state", "episode.finished"]
    code = CliRunner().invoke(main, ["--db", str(db), "replay", "cur", "--judge", "attribution", "--json"])
    assert code.exit_code == 0, code.output
    (row,) = [json.loads(line) for line in code.output.splitlines() if line.startswith("{")]
    assert row["points"] == {"attribution.0": 1.0, "attribution.1": 0.0, "attribution.2": 0.0}
    assert row["evidence"]["attribution.1"]["note"] == "invalid: HTTP 404"
    verified = json.loads(CliRunner().invoke(main, ["--db", str(db), "verify", "--json"]).stdout)
    assert verified["ok"]
    again = CliRunner().invoke(
        main, ["--db", str(db), "rerun", "cur", "--recorded-retrieval", "--record-as", "cur-again", "--json"]
    )
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["identical"], "the recorded captures answer the rerun's links"
    copied = CliRunner().invoke(main, ["--db", str(db), "show", "cur-again", "Priya_Raman_A1", "--json"])
    copies = [json.loads(line)["payload"] for line in copied.output.splitlines() if '"page.capture"' in line]
    same = ("index", "requested_url", "final_url", "status", "dom_html", "screenshot")
    assert [{k: c[k] for k in same} for c in copies] == [{k: c[k] for k in same} for c in captures]
