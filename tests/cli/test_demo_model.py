"""`p2w-rt demo-model serve`: the scripted model behind a command, driven the way the README's examples drive it."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import openai
import pytest
from pydantic import BaseModel

from p2w_cli.demo_model import GENERIC_NOTE, SCRIPTED_NOTE, schema_answer
from p2w_runtime.agent.prompts import PLANNER_MARKER

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


class _Served:
    def __init__(self, proc: subprocess.Popen[str], banner: str) -> None:
        self.proc, self.banner = proc, banner
        self.base_url = banner.split()[3].rstrip(",")
        self.port = int(self.base_url.rsplit(":", 1)[1].split("/")[0])


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [P2W_RT, "demo-model", "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.fixture
def served() -> Iterator[_Served]:
    proc = _serve("--port", "0")
    try:
        assert proc.stdout is not None
        yield _Served(proc, proc.stdout.readline())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=120)


def _stop(served: _Served, how: signal.Signals) -> tuple[int, str]:
    served.proc.send_signal(how)
    _, err = served.proc.communicate(timeout=120)  # its own stop is bounded at ~11 s; a loaded machine stretches it
    return served.proc.returncode, err


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([P2W_RT, "--db", str(db), *args], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_record_and_the_llm_judges_work_against_it_then_ctrl_c_stops_it(served: _Served, tmp_path: Path) -> None:
    assert served.banner.startswith("demo model at http://127.0.0.1:") and "a script, not a model" in served.banner
    endpoint = ["--base-url", served.base_url, "--model", "scripted-model"]
    db = tmp_path / "p2w.db"
    recorded = _cli(db, "record", *endpoint, "--task", "Priya_Raman_A1", "--label", "try-demo", "--concurrency", "1")
    assert recorded.returncode == 0, recorded.stderr
    assert "recorded try-demo" in recorded.stdout and "1 answered" in recorded.stdout

    judges = ["--judge", "rubric-llm", "--judge", "action-wise", "--judge", "outcome-based"]
    judged = _cli(db, "replay", "try-demo", *judges, *endpoint)
    assert judged.returncode == 0, judged.stderr
    assert "try-demo: judged 3, cached 0, failed 0" in judged.stderr
    metrics = _cli(db, "metrics", "try-demo", "--judge", "rubric-llm", "--format", "json")
    assert metrics.returncode == 0, metrics.stderr
    main = [row for row in map(json.loads, metrics.stdout.splitlines()) if row["table"] == "main"]
    assert [(r["model"], r["episodes"], r["judged"]) for r in main] == [("scripted-model", 1, 1)], main

    code, err = _stop(served, signal.SIGINT)
    assert (code, err.strip()) == (0, "demo model stopped")
    assert _port_is_free(served.port)


def test_sigterm_stops_it_cleanly_and_releases_the_port(served: _Served) -> None:
    code, err = _stop(served, signal.SIGTERM)
    assert (code, err.strip()) == (0, "demo model stopped")
    assert _port_is_free(served.port)


def test_a_busy_port_is_refused_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve("--port", str(port))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert out == ""
    assert err.splitlines() == [f"error: port {port} on 127.0.0.1 is in use: stop what listens there or give --port N"]


def _post(url: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_any_other_request_gets_a_scripted_answer_in_the_shape_it_asks_for(served: _Served) -> None:
    llm = openai.OpenAI(base_url=served.base_url, api_key="unused", max_retries=0)
    unknown = [{"role": "system", "content": PLANNER_MARKER}, {"role": "user", "content": "TASK: book me a yacht\n"}]
    said = llm.chat.completions.create(model="scripted-model", messages=unknown)  # type: ignore[arg-type]
    assert said.choices[0].message.content == GENERIC_NOTE
    parameters = {"type": "object", "properties": {"url": {"type": "string"}, "n": {"type": "integer", "maximum": 3}}}
    tools = [{"type": "function", "function": {"name": "goto", "parameters": parameters}}]
    ask = [{"role": "user", "content": "open the shop"}]
    called = llm.chat.completions.create(model="m", messages=ask, tools=tools)  # type: ignore[arg-type]
    (call,) = called.choices[0].message.tool_calls or []
    assert call.type == "function" and call.function.name == "goto"
    assert json.loads(call.function.arguments) == {"url": SCRIPTED_NOTE, "n": 3}
    assert called.choices[0].finish_reason == "tool_calls"
    chunks = llm.chat.completions.create(model="m", messages=ask, tools=tools, stream=True)  # type: ignore[arg-type]
    streamed = [d.function.name for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or [] if d.function]
    assert streamed == ["goto"]
    result = [
        *ask,
        {"role": "assistant", "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "ok"},
    ]
    ended = llm.chat.completions.create(model="m", messages=result, tools=tools)  # type: ignore[arg-type]
    assert ended.choices[0].message.content == GENERIC_NOTE  # a tool's result ends the agent's tool loop
    response = llm.responses.create(
        model="m",
        input="open the shop",
        tools=[{"type": "function", "name": "goto", "parameters": parameters, "strict": False}],
    )
    (item,) = response.output
    assert item.type == "function_call" and item.name == "goto"


def test_a_structured_call_gets_an_answer_of_its_schema_with_usage(served: _Served) -> None:
    class Point(BaseModel):
        score: Literal[0, 2.5]  # type: ignore[valid-type]  # a float literal, as the rubric's preference points
        evidence: list[str]
        justification: str

    class Answer(BaseModel):
        web: Point
        intent: Literal[0, 5, 10]
        note: str | None
        ok: bool

    schema = {"name": "Answer", "schema": Answer.model_json_schema()}
    messages = [{"role": "user", "content": "judge this"}]
    body = {"model": "m", "messages": messages, "response_format": {"type": "json_schema", "json_schema": schema}}
    status, reply = _post(served.base_url, body)
    assert status == 200
    content = reply["choices"][0]["message"]["content"]  # type: ignore[index]
    answer = Answer.model_validate_json(content)
    assert (answer.web.score, answer.intent, answer.web.evidence) == (2.5, 10, [])
    assert answer.web.justification == SCRIPTED_NOTE and answer.note == SCRIPTED_NOTE
    assert reply["usage"]["total_tokens"] > 0  # type: ignore[index]


def test_latency_answers_each_call_after_that_long_with_the_same_answer(served: _Served) -> None:
    slow = _serve("--port", "0", "--latency", "1.5")
    try:
        assert slow.stdout is not None
        slow_url = _Served(slow, slow.stdout.readline()).base_url
        body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        started = time.monotonic()
        status, reply = _post(slow_url, body)
        waited = time.monotonic() - started
        assert status == 200 and waited >= 1.5  # a lower bound: a sleep is never shorter
        assert reply["choices"] == _post(served.base_url, body)[1]["choices"]
    finally:
        slow.kill()
        slow.communicate(timeout=120)
    refused = subprocess.run([P2W_RT, "demo-model", "serve", "--latency", "-1"], capture_output=True, text=True)
    assert refused.returncode == 2 and "--latency" in refused.stderr


def test_schema_answer_takes_consts_and_numeric_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {"kind": {"const": "x"}, "n": {"type": "integer", "minimum": 1}, "s": {"enum": ["a", "b"]}},
    }
    assert schema_answer(schema) == {"kind": "x", "n": 1, "s": "a"}
