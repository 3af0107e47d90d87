"""An outside agent's model endpoint that trickles an answer or floods one: `record --exec`'s recording proxy holds
it to `--llm-timeout` and the 16 MiB limit of p2w-rt's own client (`fork --exec`'s live model too:
`test_rerun_exec.py`). The failure is recorded as a failed attempt and answered to the agent as an HTTP error it
reads (504 late, 502 too large), so the episode ends instead of hanging, and the flood is not read whole. A
streamed answer that stalls or floods midway reaches the agent up to there, then as a last event `{"error": ...}`,
which the `openai` SDK raises."""

from __future__ import annotations

import asyncio
import sys
import zlib
from pathlib import Path

import pytest

from p2w_rt.schemas import EpisodeFinished, LlmCall
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.store import open_store
from tests.helpers.exec_support import p2w_rt
from tests.helpers.stalling_llm import Compressed, Flood, StallingLlm, Streamed, Trickle

pytestmark = pytest.mark.slow  # Chromium

TASK = "Lena_Fischer_A1"
MIB = 2**20
ASKS = """import json, os, urllib.request, urllib.error
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
asked = urllib.request.Request(url, data=body, headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
try:
    said = str(urllib.request.urlopen(asked, timeout=600).status)
except urllib.error.HTTPError as e:
    said = f"{e.code} {json.loads(e.read())['error']['message']}"
print(json.dumps({"answer": said}))
"""
"""An agent asking the model once and answering with what it was told."""
STREAMS = """import json, openai
said = []
try:
    asked = openai.OpenAI(max_retries=0, timeout=600).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    for chunk in asked:
        said.append(chunk.choices[0].delta.content or "")
except openai.APIError as e:
    said.append(f"| {type(e).__name__}: {e.message}")  # after the words read, each with its space
print(json.dumps({"answer": "".join(said)}))
"""
"""An agent asking for a streamed answer with the ``openai`` SDK and answering with what it read, and what it raised."""


async def ended(db: Path, label: str) -> tuple[list[LlmCall], EpisodeFinished]:
    async with open_store(db) as store:
        (ref,) = await episodes_of(store, (await find_run(store, label)).run_id)
        payloads = [e.decode_payload() async for e in store.read_stream(ref.stream)]
    finished = payloads[-1]
    assert isinstance(finished, EpisodeFinished)
    return [p for p in payloads if isinstance(p, LlmCall)], finished


def recorded_through(
    tmp_path: Path, script: str, answer: Trickle | Flood | Streamed | Compressed, llm_timeout: str
) -> tuple[StallingLlm, list[LlmCall], EpisodeFinished]:
    """``record --exec`` of the agent ``script`` (label ``L``) whose model answers ``answer``: the server, and the
    episode's recorded calls and end."""
    agent, db = tmp_path / "agent.py", tmp_path / "p2w.db"
    agent.write_text(script)
    with StallingLlm(lambda n, request: answer) as server:
        done = p2w_rt(
            db, "record", "--exec", f"{sys.executable} {agent}", "--base-url", server.base_url, "--model", "m",
            "--label", "L", "--task", TASK, "--llm-timeout", llm_timeout, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls, finished = asyncio.run(ended(db, "L"))
    return server, calls, finished


@pytest.mark.parametrize(
    ("misbehaves", "status", "error"),
    [
        (Trickle(every_s=0.2), 504, "ReadTimeout: timeout after 1s"),
        (Flood(64 * MIB), 502, "BadResponse: the answer is over the 16 MiB limit; not read further"),
    ],
    ids=["trickle", "flood"],
)
def test_the_recording_proxy_ends_a_late_or_huge_answer_as_an_http_error(
    tmp_path: Path, misbehaves: Trickle | Flood, status: int, error: str
) -> None:
    server, calls, finished = recorded_through(tmp_path, ASKS, misbehaves, "1")
    assert [c.error for c in calls] == [error]  # recorded as a failed attempt
    assert finished.end_reason == "answered" and finished.answer is not None
    assert finished.answer.startswith(f"{status} ") and error in finished.answer  # what the agent read
    if isinstance(misbehaves, Flood):
        assert server.body_bytes_sent[0] < misbehaves.size / 2


@pytest.mark.parametrize(
    ("then", "llm_timeout", "error"),
    [
        (Trickle(every_s=0.2), "1", "ReadTimeout: timeout after 1s"),
        # past the limit in well under a second; seconds of CPU when each chunk searched all the event held so far
        (Flood(64 * MIB), "5", "BadResponse: the answer is over the 16 MiB limit; not read further"),
    ],
    ids=["stalls", "floods"],
)
def test_a_streamed_answer_failing_midway_ends_with_an_error_event_the_agent_raises(
    tmp_path: Path, then: Trickle | Flood, llm_timeout: str, error: str
) -> None:
    server, calls, finished = recorded_through(tmp_path, STREAMS, Streamed("penne with basil", then), llm_timeout)
    assert server.requests == 1
    assert [c.error for c in calls] == [error]  # recorded as a failed attempt
    assert finished.end_reason == "answered" and finished.answer is not None
    read, _, raised = finished.answer.partition(" | ")
    assert read == "penne with basil", finished.answer  # the events before the failure, whole
    assert raised == f"APIError: {server.base_url} failed through the recording proxy: {error}", finished.answer
    if isinstance(then, Flood):
        assert server.body_bytes_sent[0] < then.size / 2


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (Compressed("penne", wbits=zlib.MAX_WBITS), None),
        (Compressed("penne", wbits=-zlib.MAX_WBITS), None),
        (
            Compressed("penne", wbits=-zlib.MAX_WBITS, padding=64),
            "BadResponse: the answer is over the 16 MiB limit; not read further",
        ),
    ],
    ids=["zlib", "raw", "raw-past-the-limit"],
)
def test_a_deflate_answer_is_read_with_or_without_its_zlib_header(
    tmp_path: Path, answer: Compressed, error: str | None
) -> None:
    """``Content-Encoding: deflate`` is zlib's format (RFC 9110), yet many servers send raw deflate under it, and
    clients read both: so does the proxy, counting either as it inflates."""
    _, calls, finished = recorded_through(tmp_path, ASKS, answer, "30")
    assert [(c.error, c.response) for c in calls] == [(error, None if error else "penne")]
    said = finished.answer or ""
    assert said == "200" if error is None else (said.startswith("502 ") and error in said), said  # what the agent read


LEAVES = """import json, openai, time
asked = openai.OpenAI(max_retries=0).chat.completions.create(
    model="m", messages=[{"role": "user", "content": "hi"}], stream=True
)
first = next(iter(asked)).choices[0].delta.content
asked.close()
time.sleep(3)  # while the proxy still waits for the rest
print(json.dumps({"answer": first}))
"""
"""An agent that reads the first word of a streamed answer and closes the stream, as a stop sequence of its own or
a cancelled request does."""


def test_an_agent_leaving_a_stream_midway_ends_its_call_quietly(tmp_path: Path) -> None:
    """The proxy met the agent's closed connection at its next write (the rest of the answer, or its failure) and
    printed aiohttp's traceback of the reset, hundreds of lines, on the recorder's terminal."""
    agent, db = tmp_path / "agent.py", tmp_path / "p2w.db"
    agent.write_text(LEAVES)
    with StallingLlm(lambda n, request: Streamed("penne with basil", Trickle(every_s=0.2))) as server:
        done = p2w_rt(
            db, "record", "--exec", f"{sys.executable} {agent}", "--base-url", server.base_url, "--model", "m",
            "--label", "L", "--task", TASK, "--llm-timeout", "1", timeout=300,
        )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    calls, finished = asyncio.run(ended(db, "L"))
    assert [c.error for c in calls] == ["ReadTimeout: timeout after 1s"]
    assert (finished.end_reason, finished.answer) == ("answered", "penne ")  # its first word, with its space
