"""Signed bundles: a bundle signed with an Ed25519 key imports with that key; an edited one whose hashes and seals
were recomputed, a flipped signature byte, another signer's key and an unsigned bundle where a key is required are
refused, and so are key files that are missing, of the wrong kind, no regular file or too large: one line each, the
target database left empty.

Every case goes through the ``p2w-rt`` command on a real database.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key

from tests.helpers.bundle_support import events_in, forge, read_lines, write_lines
from tests.helpers.cli_in_process import invoke


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


def answer_forged(event: dict[str, Any]) -> None:
    if event["type"] == "episode.finished":
        event["payload"]["answer"] = "forged"


def test_signed_bundle_imports_with_its_key_and_the_signature_is_reported(december_db: Path, tmp_path: Path) -> None:
    private, public = write_key(tmp_path / "lab")
    bundle = tmp_path / "december.p2w"
    exported = invoke(december_db, "export", "december", "-o", str(bundle), "--sign", str(private), "--json")
    assert exported.exit_code == 0, exported.output
    summary = json.loads(exported.stdout)
    assert summary["signed_by"] and summary["path"] == str(bundle)
    assert list(read_lines(bundle)[-1]) == ["signature"]
    imported = invoke(tmp_path / "laptop.db", "import", str(bundle), "--trusted-key", str(public), "--json")
    assert imported.exit_code == 0, imported.output
    result = json.loads(imported.stdout)
    assert result["signed_by"] == summary["signed_by"] and result["inserted"] == result["events"] == summary["events"]
    assert invoke(tmp_path / "laptop.db", "verify", "december").exit_code == 0


def test_edited_bundle_with_recomputed_hashes_passes_everything_but_the_signature(
    december_db: Path, tmp_path: Path
) -> None:
    private, public = write_key(tmp_path / "lab")
    bundle = tmp_path / "december.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle), "--sign", str(private))
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


def test_forged_signature_wrong_key_and_unsigned_bundle_are_refused(december_db: Path, tmp_path: Path) -> None:
    private, public = write_key(tmp_path / "lab")
    _, stranger = write_key(tmp_path / "stranger")
    bundle, unsigned = tmp_path / "signed.p2w", tmp_path / "unsigned.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle), "--sign", str(private))
    invoke(december_db, "export", "december", "-o", str(unsigned))
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


def test_key_files_that_are_missing_or_of_the_wrong_kind_are_one_line(december_db: Path, tmp_path: Path) -> None:
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
        result = invoke(december_db, *args)
        assert result.exit_code == 1 and expected in result.output and "Traceback" not in result.output
        assert len(result.output.splitlines()) == 1 and secret not in result.output
    assert not bundle.exists()


def test_key_paths_that_are_no_regular_file_or_too_large_are_refused_unread(december_db: Path, tmp_path: Path) -> None:
    """``--trusted-key /dev/zero`` once read until memory ran out: a key is a small regular file."""
    bundle = tmp_path / "december.p2w"
    invoke(december_db, "export", "december", "-o", str(bundle))
    private, public = write_key(tmp_path / "lab")
    huge = tmp_path / "huge.pub"
    huge.write_bytes(public.read_bytes() + b"\n" * (64 * 1024))
    for args, expected in (
        (["import", str(bundle), "--trusted-key", str(tmp_path)], f"{tmp_path}: not a regular file"),
        (["import", str(bundle), "--trusted-key", "/dev/zero"], "/dev/zero: not a regular file"),
        (["import", str(bundle), "--trusted-key", str(huge)], f"{huge}: larger than 64 KiB"),
        (["export", "december", "-o", str(tmp_path / "b.p2w"), "--sign", str(tmp_path)], "not a regular file"),
    ):
        result = invoke(tmp_path / "target.db", *args) if args[0] == "import" else invoke(december_db, *args)
        assert result.exit_code == 1 and expected in result.output, result.output
        assert len(result.output.splitlines()) == 1
    assert not (tmp_path / "target.db").exists() and not (tmp_path / "b.p2w").exists()
