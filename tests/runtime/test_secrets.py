"""Secrets never reach what p2w-rt writes: the database (blobs decompressed), the JSON log, an exported bundle.

The endpoint here is hostile: it echoes the API key, an ``Authorization`` header and the credentials of the
base URL in its errors and answers. The CLI runs as real processes, so the log file is theirs alone.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import zstandard

from p2w_runtime.agent.prompts import PLANNER_MARKER
from p2w_runtime.redaction import add_secret, add_url_credentials, redact, redact_text
from p2w_runtime.testing import HttpError, ScriptedLlm, Text, system_contains
from tests.helpers.stored_support import database_text

KEY = "sk-live-ECHOED-4f1b9c2d8e7a6b5c"
PASSWORD = "pw-in-url-s3cret-77d1"
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


def p2w_rt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    db, log = tmp_path / "p2w.db", tmp_path / "p2w-rt.jsonl"
    return subprocess.run(
        [P2W_RT, "--db", str(db), "--log-file", str(log), *args], capture_output=True, text=True, timeout=300
    )


def bundle_text(path: Path) -> str:
    with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
        lines = stream.read().decode().splitlines()
    parts = []
    for line in lines:
        record = json.loads(line)
        if "blob" in record:
            parts.append(base64.b64decode(record["data"]).decode("utf-8", "replace"))
        parts.append(line)
    return "\n".join(parts)


def assert_no_secret(text: str, where: str) -> None:
    for secret in (KEY, PASSWORD, BASIC):
        assert secret not in text, f"{secret} found in {where}"


def test_an_echoing_endpoint_and_url_credentials_leave_no_secret_anywhere(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    url = scripted_llm.base_url.replace("http://", f"http://alice:{PASSWORD}@")
    echo = f"invalid key {KEY} (Authorization: Bearer {KEY}, Basic {BASIC}) calling {url}"
    scripted_llm.rule(system_contains(PLANNER_MARKER), HttpError(500, echo))
    scripted_llm.handle_with(lambda _request: Text(f"I will not judge. Your key is {KEY}; endpoint {url}"))
    endpoint = ("--model", "scripted-model", "--base-url", url, "--api-key", KEY)

    recorded = p2w_rt(
        tmp_path, "record", *endpoint, "--label", "leaky", "--scheme", "no-history", "--max-retries", "1",
        "--task", "Lena_Fischer_A3",
    )  # fmt: skip
    assert recorded.returncode == 1, recorded.stderr  # the episode failed: every planner call was a 500
    replayed = p2w_rt(tmp_path, "replay", "leaky", "--judge", "rubric-llm", *endpoint)
    assert replayed.returncode == 1, replayed.stderr  # the judgment failed: the judge never answered JSON
    exported = p2w_rt(tmp_path, "export", "leaky", "-o", str(tmp_path / "leaky.p2w"))
    assert exported.returncode == 0, exported.stderr

    database, log = database_text(tmp_path / "p2w.db"), (tmp_path / "p2w-rt.jsonl").read_text()
    assert_no_secret(database, "the database")
    assert_no_secret(log, "the log file")
    assert_no_secret(bundle_text(tmp_path / "leaky.p2w"), "the exported bundle")
    for process in (recorded, replayed, exported):
        assert_no_secret(process.stdout + process.stderr, "the console")

    # the echoes did arrive and were recorded, redacted
    with closing(sqlite3.connect(tmp_path / "p2w.db")) as conn:
        payloads = {t: [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE type=?", (t,))]
                    for t in ("run.started", "llm.call", "judgment")}  # fmt: skip
    assert payloads["run.started"][0]["config"]["base_url"] == scripted_llm.base_url.replace("//", "//***@")
    errors = [c["error"] for c in payloads["llm.call"] if c["error"]]
    assert any("invalid key *** (Authorization: ***" in e for e in errors), errors
    assert "Your key is ***" in payloads["judgment"][0]["error"]
    assert '"llm.retry"' in log and "invalid key ***" in log


def test_redaction_rules() -> None:
    add_secret("sk-unit-0123456789")
    add_url_credentials("https://bob:hunter2-pass@example.test/v1")
    assert redact_text("key sk-unit-0123456789 and hunter2-pass") == "key *** and ***"
    assert redact_text("see https://carol:other-pw@host.test/x") == "see https://***@host.test/x"
    assert redact_text('{"Authorization": "Bearer abc.def"}') == '{"Authorization": "***"}'
    assert redact_text("authorization=Basic Zm9vOmJhcg== rest") == "authorization=*** rest"
    assert redact({"headers": {"x-api-key": "whatever", "accept": "json"}, "n": [1, "ok"]}) == {
        "headers": {"x-api-key": "***", "accept": "json"},
        "n": [1, "ok"],
    }
    add_secret("EMPTY")  # a placeholder key of a keyless endpoint: redacting it would mangle ordinary text
    assert redact_text("EMPTY cart") == "EMPTY cart"
    assert redact_text("payment authorization failed") == "payment authorization failed"
