"""Hostile bundles refused on import: malformed lines, a line that decompresses to hundreds of megabytes, values no
hash can hold, a number beyond a finite float, a sealed stream left out, a run id the store never gives a run and a
huge header count. Each is one short line naming the file (and the line), and nothing is written.

Every case goes through the ``p2w-rt`` command on a real database; the memory-bound case runs the command in its own
process so that its peak RSS can be measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

from p2w_runtime.store import MARK_STREAM
from tests.helpers.bundle_support import P2W_RT, events_in, forge, read_lines, write_lines
from tests.helpers.cli_in_process import invoke
from tests.helpers.paths import REPO


def test_a_bundle_missing_a_sealed_stream_is_refused(december_db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))
    records = read_lines(bundle)
    gone = "/Ann_Lee_B3"
    kept = [r for r in records if not r.get("event", {}).get("stream", "").endswith(gone)]
    kept[0]["events"] -= len(records) - len(kept)
    cut = tmp_path / "cut.p2w"
    write_lines(cut, kept)
    result = invoke(tmp_path / "target.db", "import", str(cut))
    assert result.exit_code == 1 and gone in result.output and "stream missing: sealed by run.finished" in result.output
    assert events_in(tmp_path / "target.db") == 0


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[1, 2, 3]", "line 2: a JSON list, not an object"),
        ("[" * 100_000 + "]" * 100_000, "line 2: JSON nested too deeply"),
        ('{"blob": "abc", "data": 5}', "line 2: a blob needs string fields"),
        ('{"event": {"stream": "x"}}', "line 2: an event needs exactly the fields"),
        ("{not json", "line 2: not JSON"),
    ],
    ids=["array", "deep", "blob-fields", "event-fields", "not-json"],
)
def test_malformed_lines_are_named_and_nothing_is_written(
    december_db: Path, tmp_path: Path, line: str, expected: str
) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))
    records = read_lines(bundle)
    body = json.dumps(records[0]) + "\n" + line + "\n" + "".join(json.dumps(r) + "\n" for r in records[1:])
    bad = tmp_path / "bad.p2w"
    bad.write_bytes(zstandard.ZstdCompressor().compress(body.encode()))
    result = invoke(tmp_path / "target.db", "import", str(bad))
    assert result.exit_code == 1 and f"{bad}: {expected}" in result.output, result.output[:300]
    assert len(result.output) < 400 and "Traceback" not in result.output
    assert events_in(tmp_path / "target.db") == 0


def test_a_small_bundle_expanding_to_one_huge_line_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """9 KB on disk, 300 MB decompressed on one line: refused with a short message, far below 300 MB RSS."""
    bundle = tmp_path / "bomb.p2w"
    header = {"format": "p2w-rt-bundle", "version": 2, "run_id": "r", "label": "bomb", "events": 1, "blobs": 0}
    header["signed"] = False
    with bundle.open("wb") as raw, zstandard.ZstdCompressor(level=19).stream_writer(raw) as out:
        out.write(json.dumps(header).encode() + b'\n{"event": "')
        chunk = b"A" * (1 << 20)
        for _ in range(300):
            out.write(chunk)
        out.write(b'"}\n')
    assert bundle.stat().st_size < 64 * 1024
    measure = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.stderr.write(done.stderr)\n"
    )
    command = [sys.executable, "-c", measure, P2W_RT, "--db", str(tmp_path / "t.db")]
    done = subprocess.run(
        [*command, "import", str(bundle)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )
    code, max_rss_kb = map(int, done.stdout.split())
    assert code == 1 and f"{bundle}: line 2 is longer than 64 MiB" in done.stderr
    assert len(done.stderr) < 300, done.stderr[:300]
    assert max_rss_kb < 300 * 1024, f"peak RSS {max_rss_kb // 1024} MiB"
    assert events_in(tmp_path / "t.db") == 0


def write_escaped(bundle: Path, records: list[Any], replace: tuple[bytes, bytes] = (b"", b"")) -> None:
    """Lines as ``json.dumps`` writes them by default: a lone surrogate as its ``\\ud800`` escape, infinity as
    ``Infinity`` (``replace`` then turns that text into what a forger wants)."""
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    bundle.write_bytes(zstandard.ZstdCompressor().compress(body.replace(*replace) if replace[0] else body))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("stream", "\ud800"),
        ("event_id", "\ud800"),
        ("type", "\ud800"),
        ("recorded_at", "\udfff"),
        ("seq", 10**30),
        ("schema_version", -(10**30)),
        ("payload", {"label": "december\ud800"}),
        ("payload", {"episodes": 10**30}),
    ],
    ids=["stream", "event_id", "type", "recorded_at", "seq", "schema_version", "payload-text", "payload-int"],
)
def test_a_value_no_hash_can_hold_is_one_line_naming_the_field(
    december_db: Path, tmp_path: Path, field: str, value: Any
) -> None:
    """A lone surrogate or an integer beyond 64 bits once reached the hash and ended in a ``TypeError`` traceback."""
    bundle, bad = tmp_path / "december.p2w", tmp_path / "bad.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))
    records = read_lines(bundle)
    number = next(n for n, r in enumerate(records, 1) if "event" in r)
    event = records[number - 1]["event"]
    if isinstance(value, dict):  # a key added to the payload
        event[field] = {**event[field], **value}
    else:  # text appended to the field, or a number in its place
        event[field] = event[field] + value if isinstance(value, str) else value
    write_escaped(bad, records)
    result = invoke(tmp_path / "target.db", "import", str(bad))
    assert result.exit_code == 1 and f"{bad}: line {number}: event field '{field}'" in result.output, result.output
    assert len(result.output.splitlines()) == 1 and not (tmp_path / "target.db").exists()


def test_a_number_beyond_a_finite_float_is_refused_not_stored_as_null(december_db: Path, tmp_path: Path) -> None:
    """``1e999`` reads as infinity, which orjson hashes and stores as ``null``: a forger recomputing the hashes over
    that ``null`` had a bundle that imported, its number silently gone."""
    bundle, bad = tmp_path / "december.p2w", tmp_path / "bad.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))

    def infinite_cost(event: dict[str, Any]) -> None:
        if event["type"] == "episode.finished":
            event["payload"]["cost_usd"] = float("inf")

    records = forge(read_lines(bundle), infinite_cost)
    write_escaped(bad, records, (b"Infinity", b"1e999"))
    number = next(n for n, r in enumerate(records, 1) if r.get("event", {}).get("type") == "episode.finished")
    result = invoke(tmp_path / "target.db", "import", str(bad))
    assert result.exit_code == 1, result.output
    assert f"{bad}: line {number}: number 1e999 does not fit a finite float" in result.output
    assert len(result.output.splitlines()) == 1 and not (tmp_path / "target.db").exists()


@pytest.mark.parametrize("kind", ["mark-stream", "upper-case"])
def test_a_bundle_whose_run_id_the_store_never_gives_a_run_is_refused(
    december_db: Path, tmp_path: Path, kind: str
) -> None:
    """The store's own stream as a run: imported, ``verify`` then appended its marks into that "run"."""
    bundle, bad = tmp_path / "december.p2w", tmp_path / "bad.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))
    run_id = read_lines(bundle)[0]["run_id"]
    renamed = MARK_STREAM if kind == "mark-stream" else run_id.upper()
    records = forge(json.loads(json.dumps(read_lines(bundle)).replace(run_id, renamed)), lambda event: None)
    write_lines(bad, records)
    result = invoke(tmp_path / "target.db", "import", str(bad))
    assert result.exit_code == 1, result.output
    assert f"{bad}: the bundle's run id {renamed!r} is not one the store gives a run" in result.output
    assert len(result.output.splitlines()) == 1 and not (tmp_path / "target.db").exists()


def test_a_huge_header_count_is_clipped_in_the_message(december_db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))
    records = read_lines(bundle)
    records[0]["events"] = 10**4000
    write_lines(bundle, records)
    result = invoke(tmp_path / "target.db", "import", str(bundle))
    assert result.exit_code == 1 and "bundle is incomplete" in result.output and "(4001 characters)" in result.output
    assert len(result.output) < 400
