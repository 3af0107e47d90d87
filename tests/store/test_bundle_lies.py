"""Bundles that lie about what they hold or who signed them are refused, by every path that imports bundles.

Each case exports a real run with ``p2w-rt export``, edits the file as someone handing it around could (the
header's run id or label, one byte of the signature, the signature line), and imports it with ``p2w-rt
import``: one line naming the file, exit 1, and the target database as it was, byte for byte.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2w_rt.cli import main
from p2w_rt.replay.demo import import_example_runs
from p2w_rt.schemas import NewEvent, RunFinished, uuid7
from p2w_runtime.domain import list_runs
from p2w_runtime.store import BundleError, import_bundle, open_store, seal_streams, verify_bundle
from tests.helpers.builders import episode, run_started
from tests.helpers.raw_sqlite import raw_sqlite

LIAR_ID = "00000000-0000-0000-0000-000000000000"


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


async def _record(path: Path, label: str, tasks: tuple[str, ...]) -> None:
    async with open_store(path) as store:
        run_id = uuid7()
        await store.append([run_started(run_id, label)])
        for task in tasks:
            await store.append(*episode(run_id, task))
        seals = await seal_streams(store, run_id, into=run_id)
        await store.append([NewEvent(stream=run_id, payload=RunFinished(status="completed", episodes=2, seals=seals))])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two finished, sealed runs: ``december`` and ``november``."""
    path = tmp_path / "runs.db"
    asyncio.run(_record(path, "december", ("Ann_Lee_A3", "Ann_Lee_B3")))
    asyncio.run(_record(path, "november", ("Ann_Lee_C3", "Bo_Chen_A1")))
    return path


@pytest.fixture
def key(tmp_path: Path) -> tuple[Path, Path]:
    secret = Ed25519PrivateKey.generate()
    private, public = tmp_path / "lab.pem", tmp_path / "lab.pub"
    private.write_bytes(
        secret.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        secret.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def export(db: Path, run: str, bundle: Path, *sign: str) -> dict[str, Any]:
    done = invoke(db, "export", run, "-o", str(bundle), *sign, "--json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def lines_of(bundle: Path) -> list[bytes]:
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bundle.read_bytes())).read().splitlines(keepends=True)


def write(bundle: Path, lines: list[bytes]) -> Path:
    bundle.write_bytes(zstandard.ZstdCompressor().compress(b"".join(lines)))
    return bundle


def with_header(lines: list[bytes], **changes: Any) -> list[bytes]:
    header = json.loads(lines[0]) | changes
    return [json.dumps(header, separators=(",", ":")).encode() + b"\n", *lines[1:]]


def state(db: Path) -> tuple[bytes, list[tuple[str, str]]]:
    """The database file's bytes and its events (what a refused import must leave as it was)."""
    with raw_sqlite(db) as conn:
        events = conn.execute("SELECT event_id, hash FROM events ORDER BY position").fetchall()
    return db.read_bytes(), events


def refused(target: Path, bundle: Path, *args: str) -> str:
    """Import ``bundle`` into ``target`` (a database or a path with none yet); assert nothing changed."""
    before = state(target) if target.exists() else None
    result = invoke(target, "import", str(bundle), *args)
    assert result.exit_code == 1, result.output
    assert len(result.output.splitlines()) == 1 and result.output.startswith(f"error: {bundle}: ")
    assert (state(target) if target.exists() else None) == before
    return result.output


def test_a_header_naming_another_run_is_refused_naming_both(db: Path, tmp_path: Path) -> None:
    real = export(db, "december", tmp_path / "december.p2w")
    lies = write(
        tmp_path / "header_lies.p2w",
        with_header(lines_of(tmp_path / "december.p2w"), run_id=LIAR_ID, label="not-what-you-think"),
    )
    for target in (db, tmp_path / "fresh.db"):  # the store holding the true run, and a new one
        message = refused(target, lies)
        assert message == (
            f"error: {lies}: header names run {LIAR_ID} ('not-what-you-think'), but its events are run "
            f"{real['run_id']} ('december'): the header was edited; nothing imported\n"
        )
    assert not (tmp_path / "fresh.db").exists()


def test_a_header_naming_another_label_is_refused(db: Path, tmp_path: Path) -> None:
    export(db, "december", tmp_path / "december.p2w")
    relabelled = write(tmp_path / "relabelled.p2w", with_header(lines_of(tmp_path / "december.p2w"), label="march"))
    assert "header names run" in refused(tmp_path / "t.db", relabelled)
    assert "('march'), but its events are run" in refused(db, relabelled)


def test_a_bundle_holding_two_runs_is_refused(db: Path, tmp_path: Path) -> None:
    december = export(db, "december", tmp_path / "d.p2w")["run_id"]
    november = export(db, "november", tmp_path / "n.p2w")["run_id"]
    mine, theirs = lines_of(tmp_path / "d.p2w"), lines_of(tmp_path / "n.p2w")
    blobs = list(dict.fromkeys(b for b in mine[1:] + theirs[1:] if b.startswith(b'{"blob"')))
    events = [b for b in mine[1:] + theirs[1:] if b.startswith(b'{"event"')]
    header = with_header(mine[:1], events=len(events), blobs=len(blobs))
    merged = write(tmp_path / "both.p2w", header + blobs + events)
    assert f"('december'), but the events belong to runs {december}, {november}\n" in refused(tmp_path / "t.db", merged)


def test_a_flipped_signature_byte_is_refused_without_a_trusted_key(
    db: Path, tmp_path: Path, key: tuple[Path, Path]
) -> None:
    export(db, "december", tmp_path / "signed.p2w", "--sign", str(key[0]))
    lines = lines_of(tmp_path / "signed.p2w")
    signature = json.loads(lines[-1])
    sig = bytearray(base64.b64decode(signature["signature"]["sig"]))
    sig[7] ^= 0x01
    signature["signature"]["sig"] = base64.b64encode(bytes(sig)).decode()
    flipped = write(tmp_path / "flipped.p2w", [*lines[:-1], json.dumps(signature).encode() + b"\n"])
    for args in ((), ("--trusted-key", str(key[1]))):
        message = refused(tmp_path / "t.db", flipped, *args)
        assert "signature does not match the bundle (forged, or the bundle changed after signing" in message
    assert "signature does not match" in refused(db, flipped)


def test_a_removed_signature_line_is_refused_while_the_header_says_signed(
    db: Path, tmp_path: Path, key: tuple[Path, Path]
) -> None:
    export(db, "december", tmp_path / "signed.p2w", "--sign", str(key[0]))
    lines = lines_of(tmp_path / "signed.p2w")
    stripped = write(tmp_path / "stripped.p2w", lines[:-1])
    assert refused(tmp_path / "t.db", stripped) == (
        f"error: {stripped}: header says signed, but the signature line is missing (removed?)\n"
    )
    # the header flipped to unsigned with the signature left on: the header is not what was signed
    unsaid = write(tmp_path / "unsaid.p2w", with_header(lines, signed=False))
    assert "ends with a signature line, but its header says unsigned" in refused(tmp_path / "t.db", unsaid)


def test_a_number_json_has_not_is_refused_in_a_bundle(db: Path, tmp_path: Path) -> None:
    export(db, "december", tmp_path / "december.p2w")
    lines = lines_of(tmp_path / "december.p2w")
    at = next(i for i, b in enumerate(lines) if b'"seq":2,' in b)
    lines[at] = lines[at].replace(b'"seq":2,', b'"seq":NaN,')
    bad = write(tmp_path / "nan.p2w", lines)
    assert f"{bad}: line {at + 1}: NaN is not a JSON number" in refused(tmp_path / "t.db", bad)


def test_the_import_says_whether_and_by_whom_the_bundle_was_signed(
    db: Path, tmp_path: Path, key: tuple[Path, Path]
) -> None:
    export(db, "december", tmp_path / "plain.p2w")
    signed_by = export(db, "december", tmp_path / "signed.p2w", "--sign", str(key[0]))["signed_by"]
    plain = invoke(tmp_path / "a.db", "import", str(tmp_path / "plain.p2w"))
    assert plain.exit_code == 0 and plain.stdout.rstrip().endswith("; unsigned bundle: nothing shows who wrote it")
    verified = invoke(tmp_path / "b.db", "import", str(tmp_path / "signed.p2w"))
    assert verified.exit_code == 0 and verified.stdout.rstrip().endswith(
        f"; signature by key {signed_by} verified (no --trusted-key: the key itself is not vouched for)"
    )
    trusted = invoke(tmp_path / "c.db", "import", str(tmp_path / "signed.p2w"), "--trusted-key", str(key[1]))
    assert trusted.exit_code == 0 and trusted.stdout.rstrip().endswith(
        f"; signature by trusted key {signed_by} verified"
    )
    as_json = [
        json.loads(invoke(tmp_path / "d.db", "import", str(tmp_path / name), *args, "--json").stdout)
        for name, args in (("plain.p2w", ()), ("signed.p2w", ()), ("signed.p2w", ("--trusted-key", str(key[1]))))
    ]
    assert [(r["signature"], r["signed_by"], r["trusted"]) for r in as_json] == [
        ("unsigned", None, False),
        ("verified", signed_by, False),
        ("trusted", signed_by, True),
    ]


def test_the_demo_import_of_example_bundles_refuses_a_lying_one(db: Path, tmp_path: Path) -> None:
    export(db, "december", tmp_path / "december.p2w")
    lies = write(tmp_path / "lies.p2w", with_header(lines_of(tmp_path / "december.p2w"), run_id=LIAR_ID))

    async def demo_import() -> int:
        async with open_store(tmp_path / "demo.db") as store:
            with pytest.raises(BundleError, match="header names run 0{8}-"):
                await import_example_runs(store, [tmp_path / "december.p2w", lies])
            return len([e async for e in store.read_all()])

    # the honest bundle went in before; the lying one added nothing
    assert asyncio.run(demo_import()) == json.loads(lines_of(tmp_path / "december.p2w")[0])["events"]


def test_a_bundle_rewritten_after_verification_imports_what_was_verified(db: Path, tmp_path: Path) -> None:
    """The import reads the private copy the checks ran over: a file rewritten in place meanwhile (here with
    another run's valid bundle) changes nothing that goes in, and the copy is gone afterwards."""
    december, november = tmp_path / "december.p2w", tmp_path / "november.p2w"
    export(db, "december", december)
    export(db, "november", november)
    checked = verify_bundle(december)
    assert checked.copy.is_file() and checked.copy != december
    december.write_bytes(november.read_bytes())  # in place, same inode: what a second process could do
    target = tmp_path / "target.db"

    async def _import() -> list[str]:
        async with open_store(target) as store:
            with checked:
                summary = await import_bundle(store, checked)
            assert summary.label == "december"
            return [run.label for run in await list_runs(store)]

    assert asyncio.run(_import()) == ["december"]
    assert not checked.copy.exists()


def test_a_refused_bundle_leaves_no_private_copy(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "liar.p2w"
    export(db, "december", bundle)
    write(bundle, with_header(lines_of(bundle), label="march"))
    before = set(Path(tempfile.gettempdir()).glob("p2w-bundle-*"))
    with pytest.raises(BundleError, match="header names run"):
        verify_bundle(bundle)
    assert set(Path(tempfile.gettempdir()).glob("p2w-bundle-*")) == before


def test_an_export_names_the_run_by_its_run_started_not_by_an_edited_summary_row(db: Path, tmp_path: Path) -> None:
    """The listings read a summary row, which no trigger guards (``docs/design/summaries.md``): a run found by a
    label someone wrote into that row is still exported under its own, and the bundle imports."""
    assert invoke(db, "runs").exit_code == 0  # the first reader writes the rows
    with raw_sqlite(db) as conn:
        conn.execute(r"""UPDATE summaries SET body = replace(body, '\"label\":\"december\"', '\"label\":\"EDITED\"')""")
    bundle = tmp_path / "edited.p2w"
    assert invoke(db, "export", "EDITED", "-o", str(bundle)).exit_code == 0
    target = tmp_path / "target.db"
    imported = invoke(target, "import", str(bundle))
    assert imported.exit_code == 0, imported.output
    assert imported.output.startswith("imported december (")
