"""Every row of the "compact and fast" table (issue 37) against its anchor, in one run.

Each row is its own benchmark, which measures the anchor beside our figure in the same process run (Inspect's
``.eval`` written by inspect-ai itself, eventsourcing's recorder, ``sha256sum``, a raw loop, ``python -c pass``, the
smaller run's page); this script runs them one after the other, shows each one's output as it comes, and ends with
the lines that state each row's ratio, so that the table in the README is one command's output. The load average is
printed by every benchmark beside its figures.

Usage: python benchmarks/bench_anchors.py [--quick]  (``--quick``: fewer repeats and smaller stores)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Row:
    figure: str
    script: str
    args: tuple[str, ...]
    quick: tuple[str, ...]
    summary: str
    """A regular expression: the lines of the script's output that state the row's figure against its anchor."""


ROWS = (
    Row(
        "bytes per step, as recorded and imported (vs inspect-ai's .eval)",
        "bench_recorded_bytes.py",
        (),
        (),
        r"^(as recorded|imported)|vs \.eval|x$",
    ),
    Row(
        "metrics over 1,000 episodes (vs a raw loop over the runner's JSON files)",
        "bench_metrics.py",
        (),
        ("--repeat", "2"),
        r"metrics / raw loop|whole command|raw loop over",
    ),
    Row(
        "start-up CPU of every daily command (vs python -c pass)",
        "bench_startup.py",
        ("-n", "5"),
        ("-n", "2"),
        r"^(best of|command|--help|runs|show|metrics|replay|classify|diff|verify|floor|store floor)",
    ),
    Row(
        "verify of a 10,000-episode store (vs sha256sum, integrity_check)",
        "bench_verify.py",
        (),
        ("--episodes", "1000"),
        r"sha256sum|integrity_check|incremental|verify",
    ),
    Row(
        "viewer run page, first open (10,000 vs 1,000 episodes; 9 other runs)",
        "bench_view_first_open.py",
        (),
        ("--repeat", "1"),
        r"first open|x\b",
    ),
    Row(
        "appends per step (vs eventsourcing's SQLite recorder)",
        "bench_appends.py",
        (),
        ("--steps", "500", "--rounds", "2"),
        r"store / eventsourcing|where the store|us/step",
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller stores")
    args = parser.parse_args()
    summaries: list[tuple[Row, list[str], int, float]] = []
    for row in ROWS:
        print(f"\n=== {row.figure}: {row.script}", flush=True)
        started = time.monotonic()
        command = [sys.executable, str(HERE / row.script), *(row.quick if args.quick else row.args)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        print(done.stdout, end="", flush=True)
        if done.returncode:
            print(done.stderr[-2000:], end="", file=sys.stderr)
        pattern = re.compile(row.summary)
        lines = [line for line in done.stdout.splitlines() if pattern.search(line)]
        summaries.append((row, lines, done.returncode, time.monotonic() - started))
    print(f"\n=== the table (load average now {os.getloadavg()[0]:.2f})")
    for row, lines, code, seconds in summaries:
        state = "" if code == 0 else f"  FAILED (exit {code})"
        print(f"\n{row.figure}  [{row.script}, {seconds:.0f} s]{state}")
        for line in lines:
            print(f"  {line.strip()}")
    if any(code for _, _, code, _ in summaries):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
