"""``p2w-rt metrics`` over a judged 1,000-episode run, the whole command, against a raw loop over the same judgments
as a runner's JSON files.

The run is ``bench_scale.py``'s (bench_replay's synthetic episodes, judged once with ``rubric-rules``). The baseline
is what a researcher without p2w-rt would run: the judgments written out as one JSON file per episode (what the
Persona2Web evaluation scripts leave: the judge's points and metrics per task), then a fresh ``python`` that reads
every file with ``json.load`` and averages each metric, printed as a table. Both are subprocesses, so each pays its
interpreter's start; the figure is CPU seconds (user + system), best of ``--repeat``, and their ratio, with the
start-up of each (``p2w-rt --help``; ``python -c pass``) shown beside it.

Usage: python benchmarks/bench_metrics.py [--episodes 1000] [--repeat 5] [--dir DIR (store kept and reused)]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_scale import build_run

from p2w_rt.replay.judges import read_judgments
from p2w_runtime.store import open_store

CLI = str(Path(sys.executable).with_name("p2w-rt"))
RAW_LOOP = """
import json, sys
from pathlib import Path
sums, counts = {}, {}
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    with path.open() as f:
        record = json.load(f)
    for name, value in record["metrics"].items():
        sums[name] = sums.get(name, 0.0) + value
        counts[name] = counts.get(name, 0) + 1
for name in sorted(sums):
    print(f"{name:20} {sums[name] / counts[name]:8.3f} {counts[name]:6d}")
"""


async def write_runner_files(db: Path, run_id: str, folder: Path) -> int:
    """One JSON file per judged episode, as a runner's evaluation leaves them."""
    folder.mkdir(exist_ok=True)
    n = 0
    async with open_store(db) as store:
        for record in await read_judgments(store, run_id):
            judgment = record.judgment
            (folder / f"{judgment.task_id}.json").write_text(json.dumps(judgment.model_dump(mode="json")))
            n += 1
    return n


def cpu(command: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def best(repeat: int, command: list[str]) -> float:
    return min(cpu(command) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    db, meta, files = folder / f"metrics-{args.episodes}.db", folder / f"metrics-{args.episodes}.txt", folder / "runner"
    if not meta.exists():
        db.unlink(missing_ok=True)
        run_id, _, _ = asyncio.run(build_run(db, "big", args.episodes, args.steps))
        asyncio.run(write_runner_files(db, run_id, files))
        meta.write_text(run_id)
    env_log = {"P2W_LOG_FILE": str(folder / "log.jsonl")}
    os.environ.update(env_log)
    cpu([CLI, "--db", str(db), "runs"])  # the store's summaries brought up to date once, as after any recording
    ours = best(args.repeat, [CLI, "--db", str(db), "metrics", "big"])
    raw = best(args.repeat, [sys.executable, "-c", RAW_LOOP, str(files)])
    ours_start = best(args.repeat, [CLI, "--help"])
    raw_start = best(args.repeat, [sys.executable, "-c", "pass"])
    print(f"load {os.getloadavg()[0]:.2f}; {args.episodes} episodes judged, {len(list(files.glob('*.json')))} files")
    print(f"{'':44} {'CPU s':>8} {'start-up':>9}")
    print(f"{'p2w-rt metrics RUN (whole command)':44} {ours:8.3f} {ours_start:9.3f}")
    print(f"{'raw loop over the runner JSON files':44} {raw:8.3f} {raw_start:9.3f}")
    print(f"metrics / raw loop: {ours / raw:.2f}x CPU (target <= 1.5x)")


if __name__ == "__main__":
    main()
