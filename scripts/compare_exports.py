"""Export the same runs with two checkouts of p2w-rt and say whether every output file is byte-identical.

The store holds the bundled example runs (``earlier`` judged by ``rubric-rules`` and classified, as
``tests/replay/test_otel_export.py`` has them) and the bundled example trajectories of both runner formats, written
once by the OLD checkout; each checkout then exports every run as OpenTelemetry (JSON with and without content,
protobuf), as Parquet tables, and ``earlier`` as a bundle; and the runs of ``tests/data/fixture_dbs/v1.db`` (written
at schema version 1, read through the upcasters) as OpenTelemetry. A refactor of an export keeps its output the same:

    python scripts/compare_exports.py OLD_CHECKOUT NEW_CHECKOUT
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq


def python(code: Path, program: str, *args: str) -> str:
    """``program``'s output, run with ``code`` first on the import path."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    return subprocess.run(
        [sys.executable, "-c", program, *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def p2w(code: Path, db: Path, *args: str) -> str:
    return python(code, "import sys; from p2w_rt.cli import main; main(sys.argv[1:])", "--db", str(db), *args)


def build(code: Path, db: Path) -> list[str]:
    bundles = python(code, "from p2w_runtime.demo.examples import example_run_bundles as b; print(*b())").split()
    for bundle in bundles:
        p2w(code, db, "import", bundle)
    p2w(code, db, "replay", "earlier", "--judge", "rubric-rules")
    p2w(code, db, "classify", "earlier")
    for fmt, label in (("p2w-agentoccam", "occam"), ("p2w-browser-use", "bu")):
        p2w(code, db, "import-trajectories", "--format", fmt, "--examples", "--label", label)
    return run_ids(code, db)


def run_ids(code: Path, db: Path) -> list[str]:
    return [json.loads(line)["run_id"] for line in p2w(code, db, "runs", "--json").splitlines()]


def export(code: Path, db: Path, runs: list[str], out: Path, old_db: Path) -> None:
    out.mkdir()
    p2w(code, old_db, "export", *run_ids(code, old_db), "--format", "otel", "-o", str(out / "v1-otel.jsonl"))
    p2w(code, db, "export", *runs, "--format", "otel", "-o", str(out / "otel.jsonl"))
    p2w(code, db, "export", *runs, "--format", "otel", "--no-content", "-o", str(out / "otel-no-content.jsonl"))
    p2w(code, db, "export", *runs, "--format", "otel", "--encoding", "protobuf", "-o", str(out / "otel.pb"))
    p2w(code, db, "export", *runs, "--format", "parquet", "-o", str(out / "tables"))
    p2w(code, db, "export", "earlier", "-o", str(out / "earlier.p2w"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        runs = build(args.old, db)
        old_db = Path(tmp) / "v1.db"
        shutil.copyfile(args.old / "tests" / "data" / "fixture_dbs" / "v1.db", old_db)
        for name, code in (("old", args.old), ("new", args.new)):
            export(code, db, runs, Path(tmp) / name, old_db)
        old, new = Path(tmp) / "old", Path(tmp) / "new"
        differ = 0
        for path in sorted(p.relative_to(old) for p in old.rglob("*") if p.is_file()):
            if path.suffix == ".parquet":  # the file's metadata names the writer; compare the tables
                same = pq.read_table(old / path).equals(pq.read_table(new / path))
            else:
                same = (old / path).read_bytes() == (new / path).read_bytes()
            differ += not same
            print(f"{'same' if same else 'DIFFERENT'}  {path} ({(old / path).stat().st_size} bytes)")
        print(f"{len(runs)} runs; {differ} file(s) differ")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
