"""Bundles as files a user hands around: signed or not, written over or not, and hostile ones.

Every case goes through the ``p2w-rt`` command on a real database; the memory-bound case runs the command
in its own process so that its peak RSS can be measured.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key

from p2w_rt.cli import main
from p2w_rt.schemas import GENESIS_HASH, NewEvent, RunFinished, StoredEvent, uuid7
from p2w_runtime.store import MARK_STREAM, open_store, seal_streams
from tests.helpers.builders import episode, run_started
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
SEAL_TYPES = ("run.finished", "streams.sealed")


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A finished run sealed the way ``record`` seals it."""
    path = tmp_path / "runs.db"

    async def make() -> None:
        async with open_store(path) as store:
            run_id = uuid7()
            await store.append([run_started(run_id, "december")])
            for task in ("Ann_Lee_A3", "Ann_Lee_B3", "Ann_Lee_C3"):
                await store.append(*episode(run_id, task))
            seals = await seal_streams(store, run_id, into=run_id)
            finished = RunFinished(status="completed", episodes=3, seals=seals)
            await store.append([NewEvent(stream=run_id, payload=finished)])

    asyncio.run(make())
    return path


def write_key(path: Path) -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private = path.with_suffix(".pem")
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public = path.with_suffix(".pub")
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def read_lines(bundle: Path) -> list[dict[str, Any]]:
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bundle.read_bytes())).read().decode()
    return [json.loads(line) for line in text.splitlines()]


def write_lines(bundle: Path, records: list[Any]) -> None:
    body = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    bundle.write_bytes(zstandard.ZstdCompressor().compress(body.encode()))


def forge(records: list[dict[str, Any]], edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Edit events, then recompute every hash, chain link and seal: a bundle consistent again.

    The run's own stream comes first in a bundle, so its seal refers to streams further down: a second round
    seals the heads the first one settled.
    """
    events = [record["event"] for record in records if "event" in record]
    for event in events:
        edit(event)
    final: dict[str, tuple[int, str]] = {}
    for _ in range(2):
        heads: dict[str, tuple[int, str]] = {}
        for event in events:
            event["prev_hash"] = heads.get(event["stream"], (0, GENESIS_HASH))[1]
            if event["type"] in SEAL_TYPES and event["payload"].get("seals") and final:
                event["payload"]["seals"] = [
                    {"stream": s["stream"], "events": final[s["stream"]][0], "head_hash": final[s["stream"]][1]}
                    for s in event["payload"]["seals"]
                ]
            event["hash"] = StoredEvent.from_dict(event).compute_hash()
            heads[event["stream"]] = (event["seq"], event["hash"])
        final = heads
    return records


def answer_forged(event: dict[str, Any]) -> None:
    if event["type"] == "episode.finished":
        event["payload"]["answer"] = "forged"


def events_in(db: Path) -> int:
    if not db.exists():
        return 0
    with raw_sqlite(db) as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


def test_signed_bundle_imports_with_its_key_and_the_signature_is_reported(db: Path, tmp_path: Path) -> None:
    private, public = write_key(tmp_path / "lab")
    bundle = tmp_path / "december.p2w"
    exported = invoke(db, "export", "december", "-o", str(bundle), "--sign", str(private), "--json")
    assert exported.exit_code == 0, exported.output
    summary = json.loads(exported.stdout)
    assert summary["signed_by"] and summary["path"] == str(bundle)
    assert list(read_lines(bundle)[-1]) == ["signature"]
    imported = invoke(tmp_path / "laptop.db", "import", str(bundle), "--trusted-key", str(public), "--json")
    assert imported.exit_code == 0, imported.output
    result = json.loads(imported.stdout)
    assert result["signed_by"] == summary["signed_by"] and result["inserted"] == result["events"] == summary["events"]
    assert invoke(tmp_path / "laptop.db", "verify", "december").exit_code == 0


def test_edited_bundle_with_recomputed_hashes_passes_everything_but_the_signature(db: Path, tmp_path: Path) -> None:
    private, public = write_key(tmp_path / "lab")
    bundle = tmp_path / "december.p2w"
    invoke(db, "export", "december", "-o", str(bundle), "--sign", str(private))
    forged = tmp_path / "forged.p2w"
    records = forge(read_lines(bundle), answer_forged)
    write_lines(forged, records)
    # hashes, chains and seals are all consistent again; the signature it still carries is not, key or no key
    for target, key in ((tmp_path / "gullible.db", ()), (tmp_path / "careful.db", ("--trusted-key", str(public)))):
        refused = invoke(target, "import", str(forged), *key)
        assert refused.exit_code == 1
        assert f"{forged}: signature does not match the bundle" in refused.output
        assert not target.exists()
    # the forger strips the signature and says unsigned: it goes in, reported unsigned; a trusted key refuses it
    records[0]["signed"] = False
    write_lines(forged, records[:-1])
    accepted = invoke(tmp_path / "gullible.db", "import", str(forged))
    assert accepted.exit_code == 0 and accepted.stdout.rstrip().endswith("unsigned bundle: nothing shows who wrote it")
    assert invoke(tmp_path / "gullible.db", "verify").exit_code == 0
    refused = invoke(tmp_path / "careful.db", "import", str(forged), "--trusted-key", str(public))
    assert refused.exit_code == 1 and "not signed, but --trusted-key requires a signature" in refused.output
    assert events_in(tmp_path / "careful.db") == 0


def test_forged_signature_wrong_key_and_unsigned_bundle_are_refused(db: Path, tmp_path: Path) -> None:
    private, public = write_key(tmp_path / "lab")
    _, stranger = write_key(tmp_path / "stranger")
    bundle, unsigned = tmp_path / "signed.p2w", tmp_path / "unsigned.p2w"
    invoke(db, "export", "december", "-o", str(bundle), "--sign", str(private))
    invoke(db, "export", "december", "-o", str(unsigned))
    records = read_lines(bundle)
    sig = bytearray(base64.b64decode(records[-1]["signature"]["sig"]))
    sig[0] ^= 1
    records[-1]["signature"]["sig"] = base64.b64encode(bytes(sig)).decode()
    flipped = tmp_path / "flipped.p2w"
    write_lines(flipped, records)
    cases = [
        (flipped, public, "signature does not match the bundle"),
        (bundle, stranger, "not by the trusted key"),
        (unsigned, public, "not signed, but --trusted-key requires a signature"),
    ]
    for n, (path, key, expected) in enumerate(cases):
        target = tmp_path / f"target{n}.db"
        result = invoke(target, "import", str(path), "--trusted-key", str(key))
        assert result.exit_code == 1 and expected in result.output and str(path) in result.output, result.output
        assert len(result.output.splitlines()) == 1 and events_in(target) == 0


def test_key_files_that_are_missing_or_of_the_wrong_kind_are_one_line(db: Path, tmp_path: Path) -> None:
    rsa = tmp_path / "rsa.pem"
    rsa.write_bytes(
        generate_private_key(65537, 2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    junk = tmp_path / "junk.pub"
    junk.write_text("not a key")
    secret = "c2VjcmV0LWtleS1tYXRlcmlhbA"
    broken = tmp_path / "broken.pem"
    broken.write_text(f"-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----\n")
    bundle = tmp_path / "b.p2w"
    for args, expected in (
        (["export", "december", "-o", str(bundle), "--sign", str(tmp_path / "none.pem")], "no such private key file"),
        (["export", "december", "-o", str(bundle), "--sign", str(rsa)], "not an Ed25519 private key"),
        (["export", "december", "-o", str(bundle), "--sign", str(broken)], "not an unencrypted PEM private key"),
        (["import", str(bundle), "--trusted-key", str(junk)], "not a PEM public key"),
    ):
        result = invoke(db, *args)
        assert result.exit_code == 1 and expected in result.output and "Traceback" not in result.output
        assert len(result.output.splitlines()) == 1 and secret not in result.output
    assert not bundle.exists()


def test_a_bundle_missing_a_sealed_stream_is_refused(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(db, "export", "december", "-o", str(bundle))
    records = read_lines(bundle)
    gone = "/Ann_Lee_B3"
    kept = [r for r in records if not r.get("event", {}).get("stream", "").endswith(gone)]
    kept[0]["events"] -= len(records) - len(kept)
    cut = tmp_path / "cut.p2w"
    write_lines(cut, kept)
    result = invoke(tmp_path / "target.db", "import", str(cut))
    assert result.exit_code == 1 and gone in result.output and "stream missing: sealed by run.finished" in result.output
    assert events_in(tmp_path / "target.db") == 0


def test_export_over_an_existing_file_needs_force(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    bundle.write_bytes(b"a bundle from last year")
    refused = invoke(db, "export", "december", "-o", str(bundle))
    assert refused.exit_code == 1 and f"{bundle}: already exists (--force replaces it)" in refused.output
    assert bundle.read_bytes() == b"a bundle from last year"
    assert invoke(db, "export", "december", "-o", str(bundle), "--force").exit_code == 0
    assert read_lines(bundle)[0]["label"] == "december"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_export_into_a_missing_or_unwritable_folder_is_one_line(db: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "b.p2w"
    result = invoke(db, "export", "december", "-o", str(missing))
    assert result.exit_code == 1 and f"folder {missing.parent} does not exist" in result.output
    # a folder no one may write to: /proc refuses even root
    result = invoke(db, "export", "december", "-o", "/proc/december.p2w")
    assert result.exit_code == 1 and "/proc/december.p2w: cannot write the bundle" in result.output
    assert len(result.output.splitlines()) == 1


def test_two_processes_exporting_to_one_path_at_once_leave_one_whole_bundle(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    command = [P2W_RT, "--db", str(db), "export", "december", "-o", str(bundle)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    both = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO) for _ in range(2)]
    results = sorted((p.wait(timeout=120), p.stderr.read()) for p in both)
    assert results[0] == (0, "")
    assert results[1][0] == 1 and f"{bundle}: already exists (--force replaces it)" in results[1][1]
    assert invoke(tmp_path / "target.db", "import", str(bundle)).exit_code == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


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
def test_malformed_lines_are_named_and_nothing_is_written(db: Path, tmp_path: Path, line: str, expected: str) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(db, "export", "december", "-o", str(bundle))
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


def test_progress_goes_to_a_terminal_only(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    piped = invoke(db, "export", "december", "-o", str(bundle))
    assert piped.exit_code == 0 and piped.stderr == ""
    main_fd, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [P2W_RT, "--db", str(tmp_path / "t.db"), "import", str(bundle)],
            stdout=subprocess.PIPE,
            stderr=terminal,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm"},
            timeout=120,
        )
        os.close(terminal)
        shown = b""
        while True:
            try:
                data = os.read(main_fd, 65536)
            except OSError:
                break
            if not data:
                break
            shown += data
    finally:
        os.close(main_fd)
    assert done.returncode == 0 and b"imported december" in done.stdout
    assert b"importing" in shown and b"imported" not in shown


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
    db: Path, tmp_path: Path, field: str, value: Any
) -> None:
    """A lone surrogate or an integer beyond 64 bits once reached the hash and ended in a ``TypeError`` traceback."""
    bundle, bad = tmp_path / "december.p2w", tmp_path / "bad.p2w"
    invoke(db, "export", "december", "-o", str(bundle))
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


def test_a_number_beyond_a_finite_float_is_refused_not_stored_as_null(db: Path, tmp_path: Path) -> None:
    """``1e999`` reads as infinity, which orjson hashes and stores as ``null``: a forger recomputing the hashes over
    that ``null`` had a bundle that imported, its number silently gone."""
    bundle, bad = tmp_path / "december.p2w", tmp_path / "bad.p2w"
    invoke(db, "export", "december", "-o", str(bundle))

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
def test_a_bundle_whose_run_id_the_store_never_gives_a_run_is_refused(db: Path, tmp_path: Path, kind: str) -> None:
    """The store's own stream as a run: imported, ``verify`` then appended its marks into that "run"."""
    bundle, bad = tmp_path / "december.p2w", tmp_path / "bad.p2w"
    invoke(db, "export", "december", "-o", str(bundle))
    run_id = read_lines(bundle)[0]["run_id"]
    renamed = MARK_STREAM if kind == "mark-stream" else run_id.upper()
    records = forge(json.loads(json.dumps(read_lines(bundle)).replace(run_id, renamed)), lambda event: None)
    write_lines(bad, records)
    result = invoke(tmp_path / "target.db", "import", str(bad))
    assert result.exit_code == 1, result.output
    assert f"{bad}: the bundle's run id {renamed!r} is not one the store gives a run" in result.output
    assert len(result.output.splitlines()) == 1 and not (tmp_path / "target.db").exists()


def test_a_huge_header_count_is_clipped_in_the_message(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(db, "export", "december", "-o", str(bundle))
    records = read_lines(bundle)
    records[0]["events"] = 10**4000
    write_lines(bundle, records)
    result = invoke(tmp_path / "target.db", "import", str(bundle))
    assert result.exit_code == 1 and "bundle is incomplete" in result.output and "(4001 characters)" in result.output
    assert len(result.output) < 400


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_export_never_replaces_what_is_not_a_regular_file(db: Path, tmp_path: Path, force: bool) -> None:
    """Moving the bundle into place replaces the directory entry: --force once made a symlink, or (as root)
    ``/dev/full``, a regular file."""
    target = tmp_path / "kept.txt"
    target.write_text("what the link points at")
    link, dangling, fifo, folder = (tmp_path / n for n in ("link.p2w", "dangling.p2w", "fifo.p2w", "folder.p2w"))
    link.symlink_to(target)
    dangling.symlink_to(tmp_path / "nowhere")
    os.mkfifo(fifo)
    folder.mkdir()
    kinds = {link: "a symbolic link", dangling: "a symbolic link", fifo: "a named pipe", folder: "a directory"}
    for path, kind in kinds.items():
        result = invoke(db, "export", "december", "-o", str(path), *(["--force"] if force else []))
        assert result.exit_code == 1 and f"{path}: is {kind}, not a regular file" in result.output, result.output
        assert len(result.output.splitlines()) == 1
    assert link.is_symlink() and dangling.is_symlink() and target.read_text() == "what the link points at"
    assert fifo.is_fifo() and folder.is_dir() and not (tmp_path / "nowhere").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_key_paths_that_are_no_regular_file_or_too_large_are_refused_unread(db: Path, tmp_path: Path) -> None:
    """``--trusted-key /dev/zero`` once read until memory ran out: a key is a small regular file."""
    bundle = tmp_path / "december.p2w"
    invoke(db, "export", "december", "-o", str(bundle))
    private, public = write_key(tmp_path / "lab")
    huge = tmp_path / "huge.pub"
    huge.write_bytes(public.read_bytes() + b"\n" * (64 * 1024))
    for args, expected in (
        (["import", str(bundle), "--trusted-key", str(tmp_path)], f"{tmp_path}: not a regular file"),
        (["import", str(bundle), "--trusted-key", "/dev/zero"], "/dev/zero: not a regular file"),
        (["import", str(bundle), "--trusted-key", str(huge)], f"{huge}: larger than 64 KiB"),
        (["export", "december", "-o", str(tmp_path / "b.p2w"), "--sign", str(tmp_path)], "not a regular file"),
    ):
        result = invoke(tmp_path / "target.db", *args) if args[0] == "import" else invoke(db, *args)
        assert result.exit_code == 1 and expected in result.output, result.output
        assert len(result.output.splitlines()) == 1
    assert not (tmp_path / "target.db").exists() and not (tmp_path / "b.p2w").exists()
