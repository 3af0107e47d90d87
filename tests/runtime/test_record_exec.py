"""`record --exec CMD`: the two example agents (Python, Node), which know nothing of p2w-rt, recorded with no code
change on the bundled demo sites, then verified, judged, classified, shown and viewed; the key of an endpoint that
echoes it stored nowhere; the generic demo model driving both as the README says."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from p2w_runtime.exec import agent_name, answer_of, attributes, spans_of, tool_args
from p2w_runtime.testing import HttpError, ScriptedLlm, Text, ToolCall
from tests.helpers.exec_support import ANSWER, KEY, P2W_RT, PENNE, PYTHON_AGENT, SEARCH, TASK, p2w_rt, record_exec
from tests.helpers.paths import REPO
from tests.helpers.stored_support import database_text, stored_events
from tests.helpers.suite_tmp import left_behind, process_tmpdir
from tests.helpers.view_support import fetch, serving

NODE_AGENT = "node examples/node_agent/agent.mjs"


def shown(db: Path, label: str, task: str = TASK) -> list[dict[str, object]]:
    done = p2w_rt(db, "show", label, task, "--json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["payload"] for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def python_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ScriptedLlm, list[str]]]:
    """The Python example on one task: search the grocery shop, open the penne, two boxes, add to cart, answer;
    recorded with a TMPDIR of its own: what it left there third."""
    db = tmp_path_factory.mktemp("exec-python") / "p2w.db"
    with ScriptedLlm() as llm, process_tmpdir() as tmp:
        llm.script(
            Text(f"Thought: Basket sells groceries.\nAction: goto [{SEARCH}]"),
            Text(f"Thought: The first result is gluten-free and organic.\nAction: click [{PENNE}]"),
            Text("Thought: Two boxes.\nAction: fill [Quantity=2]"),
            Text("Action: click [Add to cart]"),
            Text(f"Thought: Both boxes are in the cart.\nAction: stop [{ANSWER}]"),
        )
        done = record_exec(db, PYTHON_AGENT, llm.base_url, "py", "--task", TASK, tmp=tmp)
        left = left_behind(tmp)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "1 answered" in done.stdout
        yield db, llm, left


def test_the_recording_and_its_agent_left_nothing_in_the_temp_dir(
    python_run: tuple[Path, ScriptedLlm, list[str]],
) -> None:
    """Chromium's profile and socket folder, and the agent's own temp dir (in which its Playwright driver left the
    folder of a CDP connection the example never closes) are removed (docs/design/temp-files.md)."""
    assert python_run[2] == []


def test_the_python_example_is_recorded_as_an_episode_of_its_steps(
    python_run: tuple[Path, ScriptedLlm, list[str]],
) -> None:
    db, llm, _ = python_run
    events = shown(db, "py")
    types = [e["type"] for e in events]
    assert types[0] == "episode.started" and types[-2:] == ["final_state", "episode.finished"]
    assert types.count("llm.call") == 5 and types.count("observation") == 5  # the fill changed the page: observed
    calls = [e for e in events if e["type"] == "llm.call"]
    assert [c["step"] for c in calls] == [1, 2, 3, 4, 5] and all(c["error"] is None for c in calls)
    assert calls[0]["response"].endswith(f"goto [{SEARCH}]")  # type: ignore[union-attr]
    gotos = [e["parsed"] for e in events if e["type"] == "action"]
    assert gotos == [
        {"name": "goto", "args": [SEARCH]},
        {"name": "goto", "args": ["http://basket.p2w.test/product/bsk-a11"]},
        {"name": "goto", "args": ["http://basket.p2w.test/cart"]},
    ]  # the navigations it made, seen from outside
    finished, final = events[-1], events[-2]
    assert (finished["end_reason"], finished["answer"], finished["steps"]) == ("answered", ANSWER, 5)
    assert final["url"] == "http://basket.p2w.test/cart" and final["dom_html"]
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in llm.requests)  # the real key went upstream
    assert all(KEY not in r.raw for r in llm.requests)
    runs = p2w_rt(db, "runs", "--json")
    assert json.loads(runs.stdout.splitlines()[0])["agent"] == "exec:exec_agent.py"


def test_the_python_example_run_verifies_judges_classifies_and_views(
    python_run: tuple[Path, ScriptedLlm, list[str]],
) -> None:
    db, _, _ = python_run
    verified = p2w_rt(db, "verify", "py")
    assert verified.returncode == 0 and "0 events not covered by a seal" in verified.stdout, verified.stdout
    judged = p2w_rt(db, "replay", "py", "--judge", "rubric-rules")
    assert judged.returncode == 0, judged.stderr
    assert f"{TASK}  rubric-rules" in judged.stdout and "intent=1.000" in judged.stdout
    classified = p2w_rt(db, "classify", "py")
    assert classified.returncode == 0 and "classified 1" in classified.stderr, classified.stderr
    assert f"{TASK}  history_retrieval_failure" in classified.stdout  # it asked no history: the label says so
    with serving(db, cwd=db.parent) as url:
        status, _, body = fetch(url + f"api/run/py/episode/{TASK}")
        page_status, _, html = fetch(url + f"run/py/episode/{TASK}")
    assert status == 200 and page_status == 200
    stored = {e.event_id for e in stored_events(db, prefix=f"{json.loads(body)['run_id']}/{TASK}")}
    assert set(json.loads(body)["event_ids"]) == stored
    assert PENNE.replace("&", "&amp;") in html.decode()


def test_the_node_example_is_recorded_with_its_tool_calls_and_tool_spans(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    with ScriptedLlm() as llm:
        llm.script(
            ToolCall("goto", json.dumps({"url": SEARCH})),
            ToolCall("click", json.dumps({"target": PENNE})),
            ToolCall("fill", json.dumps({"label": "Quantity", "text": "2"})),
            ToolCall("click", json.dumps({"target": "No such button"})),
            ToolCall("click", json.dumps({"target": "Add to cart"})),
            Text(ANSWER),
        )
        done = record_exec(db, NODE_AGENT, llm.base_url, "node", "--task", TASK)
    assert done.returncode == 0, done.stderr[-3000:]
    events = shown(db, "node")
    actions = [(e["step"], e["parsed"], e["status"]) for e in events if e["type"] == "action"]
    assert actions == [
        (1, {"name": "goto", "args": [SEARCH]}, "executed"),
        (2, {"name": "click", "args": [PENNE]}, "executed"),
        (3, {"name": "fill", "args": ["Quantity", "2"]}, "executed"),
        (4, {"name": "click", "args": ["No such button"]}, "invalid"),
        (4, {"name": "click", "args": ["Add to cart"]}, "executed"),  # the page did not change: the same step
    ]  # its spans, not the navigations: they say what it did
    calls = [e for e in events if e["type"] == "llm.call"]
    assert json.loads(str(calls[0]["response"])) == {
        "tool_calls": [{"name": "goto", "arguments": json.dumps({"url": SEARCH})}]
    }
    assert calls[-1]["response"] == ANSWER
    assert (events[-1]["end_reason"], events[-1]["answer"]) == ("answered", ANSWER)
    assert events[-2]["url"] == "http://basket.p2w.test/cart"
    assert p2w_rt(db, "verify", "node").returncode == 0
    judged = p2w_rt(db, "replay", "node", "--judge", "rubric-rules")
    assert judged.returncode == 0 and "intent=1.000" in judged.stdout, judged.stdout
    assert p2w_rt(db, "classify", "node").returncode == 0


def test_an_endpoint_that_echoes_the_key_leaves_it_nowhere(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    with ScriptedLlm() as llm:
        llm.script(HttpError(401, f"invalid api key {KEY} (Authorization: Bearer {KEY})"))
        done = record_exec(db, PYTHON_AGENT, llm.base_url, "leaky", "--task", TASK)
        sent = llm.requests[0].headers["Authorization"]
    assert done.returncode == 1 and "every episode failed" in done.stderr, done.stderr
    assert sent == f"Bearer {KEY}"
    finished = shown(db, "leaky")[-1]
    assert finished["end_reason"] == "error" and "exited with status 1" in str(finished["detail"])
    assert "invalid api key ***" in str(finished["detail"])  # the agent's traceback, redacted
    call = next(e for e in shown(db, "leaky") if e["type"] == "llm.call")
    assert "invalid api key ***" in str(call["error"])
    for text, where in (
        (database_text(db), "the database"),
        (db.with_suffix(".jsonl").read_text(), "the log"),
        (done.stdout + done.stderr, "the console"),
    ):
        assert KEY not in text, f"the key is in {where}"


def test_both_examples_run_against_the_generic_demo_model_as_the_readme_says(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [P2W_RT, "demo-model", "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().split()[3].rstrip(",")
        db = tmp_path / "demo.db"
        for command, label in ((PYTHON_AGENT, "py-agent"), (NODE_AGENT, "node-agent")):
            done = record_exec(db, command, base_url, label, "--level", "2", "--limit", "1")
            assert done.returncode == 0 and "1 answered" in done.stdout, done.stderr[-3000:]
            finished = shown(db, label, "Lena_Fischer_A1")[-1]
            assert "scripted demo model" in str(finished["answer"])
            assert p2w_rt(db, "replay", label, "--judge", "rubric-rules").returncode == 0
    finally:
        server.terminate()
        server.communicate(timeout=30)
    node = [e for e in shown(db, "node-agent", "Lena_Fischer_A1") if e["type"] == "action"]
    assert [(a["parsed"]["name"], a["status"]) for a in node] == [("goto", "invalid")]  # type: ignore[index]


def test_the_agent_is_named_by_its_script_and_its_answer_file_wins(tmp_path: Path) -> None:
    assert agent_name(["python3", "-u", "/home/me/agents/shop.py", "--fast"]) == "exec:shop.py"
    assert agent_name(["/opt/bin/my-agent", "run"]) == "exec:my-agent"
    answer_file = tmp_path / "answer"
    assert answer_of('{"answer": "from stdout"}', answer_file) == "from stdout"
    assert answer_of("not json", answer_file) is None
    assert answer_of('{"answer": {"items": 2}}', answer_file) == '{"items": 2}'
    answer_file.write_text('{"answer": "from the file"}')
    assert answer_of('{"answer": "from stdout"}', answer_file) == "from the file"
    answer_file.write_text("plain text answer\n")
    assert answer_of(None, answer_file) == "plain text answer"


def test_spans_read_alike_from_otlp_protobuf_and_json() -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    def attrs(values: dict[str, str]) -> list[KeyValue]:
        return [KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in values.items()]

    late = Span(
        name="execute_tool click", start_time_unix_nano=20, attributes=attrs({"gen_ai.operation.name": "execute_tool"})
    )
    early = Span(name="chat", start_time_unix_nano=10, attributes=attrs({"gen_ai.operation.name": "chat"}))
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[late, early])])])
    from_proto = spans_of(request.SerializeToString(), "application/x-protobuf")
    assert [s["name"] for s in from_proto] == ["chat", "execute_tool click"]  # in the order they started
    assert attributes(from_proto[1]) == {"gen_ai.operation.name": "execute_tool"}
    as_json = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x", "attributes": [
        {"key": "n", "value": {"intValue": "3"}}, {"key": "ok", "value": {"boolValue": True}}]}]}]}]}  # fmt: skip
    assert attributes(spans_of(json.dumps(as_json).encode(), "application/json")[0]) == {"n": 3, "ok": True}
    with pytest.raises(ValueError, match="not an ExportTraceServiceRequest"):
        spans_of(b"\xff\xff not protobuf", "application/x-protobuf")
    assert tool_args('{"label": "Quantity", "text": "2"}') == ["Quantity", "2"]
    assert tool_args("not json") == ["not json"] and tool_args(None) == []


def test_an_interrupted_run_resumes_with_the_same_agent_only(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    endpoint = ("--base-url", "http://127.0.0.1:9/v1")  # never called: these agents ask no model
    agent = tmp_path / "agent.sh"  # the same command resumes; what the script does may change (a fix, here: no wait)
    agent.write_text("sleep 600\n")
    with process_tmpdir() as tmp:
        stopped = subprocess.Popen(
            [P2W_RT, "--db", str(db), "record", "--exec", f"sh {agent}", *endpoint, "--model", "m", "--task", TASK,
             "--label", "stopped"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)},
        )  # fmt: skip
        deadline = time.monotonic() + 300
        while not _has_event(db, "episode.started"):  # the episode is open (its steps are written behind)
            assert stopped.poll() is None and time.monotonic() < deadline, stopped.communicate()
            time.sleep(0.2)
        stopped.send_signal(signal.SIGINT)
        _, err = stopped.communicate(timeout=120)
        assert stopped.returncode == 130, err
        assert left_behind(tmp) == []  # the agent killed, Chromium closed, their folders removed
    assert "interrupted" in p2w_rt(db, "runs").stdout
    other = p2w_rt(db, "record", "--resume", "stopped", "--exec", "true", *endpoint)
    assert other.returncode != 0 and "agent 'exec:true' (recorded: 'exec:agent.sh')" in other.stderr, other.stderr
    agent.write_text("exit 0\n")
    resumed = p2w_rt(db, "record", "--resume", "stopped", "--exec", f"sh {agent}", *endpoint)
    assert resumed.returncode == 0 and "1 no_answer" in resumed.stdout, resumed.stderr
    episode = shown(db, "stopped")
    assert episode[0]["episode_id"] == f"{TASK}#2" and episode[-1]["end_reason"] == "no_answer"
    assert p2w_rt(db, "verify", "stopped").returncode == 0


def _has_event(db: Path, kind: str) -> bool:
    if not db.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            return conn.execute("SELECT 1 FROM events WHERE type = ? LIMIT 1", (kind,)).fetchone() is not None
    except sqlite3.OperationalError:  # not created yet
        return False


def test_bad_exec_options_are_one_line_and_leave_no_database(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    endpoint = ("--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", TASK)
    for args, said in (
        (("--exec", "no-such-agent-program", *endpoint), "'no-such-agent-program' is not a program found here"),
        (("--exec", "sleep 0", "--model", "m"), "--exec needs --base-url"),
        (("--exec", "sleep 0", "--agent", "browser-use", *endpoint), "give either --agent or --exec CMD"),
        (("--exec", "sleep 0", "--capture-links", *endpoint), "without --profiles or --capture-links"),
        (("--exec", "'unclosed", *endpoint), "No closing quotation"),
    ):
        done = p2w_rt(db, "record", *args)
        assert done.returncode != 0 and said in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert not db.exists()
