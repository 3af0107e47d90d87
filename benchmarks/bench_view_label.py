"""Viewer benchmark: labelling episodes of a large run in a running viewer (the label form posted, then the run page
it returns to), for a 1,000-episode and a 10,000-episode run.

The runs are ``bench_view_first_open.py``'s (built once; kept with ``--dir``), each copied before it is labelled. One
viewer (``ViewQueries`` over the open store, in this process: no HTTP) opens the run page, then labels one episode
after another. After each label, alternately, the page is opened as the viewer opens it (the run read it kept brought
forward by the label's judgment: ``p2w_cli/view/_run_cache.py``) or with the kept read dropped first, which reads the
whole run again: the baseline, measured in the same run. Printed: the median wall of the label post and of each page
open, and their ratios.

Usage: python benchmarks/bench_view_label.py [--dir DIR (stores kept and reused)] [--steps 2] [--labels 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_view_first_open import store

from p2w_cli.view._filters import parse_filter
from p2w_cli.view._pages import ViewQueries, ViewState
from p2w_runtime.store import open_store


async def label_run(db: Path, run_id: str, labels: int) -> dict[str, list[float]]:
    """Wall seconds of each label post and of each page open after it, brought forward or read whole."""
    times: dict[str, list[float]] = {"label": [], "forward": [], "whole": []}
    state = ViewState(db)
    async with open_store(db, create=False) as opened:
        state.stores[db.resolve()] = opened
        queries = ViewQueries(state)
        page = await queries.run(run_id, *parse_filter({}))
        for n in range(labels):
            started = time.perf_counter()
            await queries.label(run_id, page.shown[n].episode_id, {"p_web": ["1"], "error": []}, "bench")
            times["label"].append(time.perf_counter() - started)
            way = "forward" if n % 2 == 0 else "whole"
            if way == "whole":
                queries.reads.entries.clear()
            started = time.perf_counter()
            await queries.run(run_id, *parse_filter({}))
            times[way].append(time.perf_counter() - started)
        assert queries.reads.advanced == (labels + 1) // 2, queries.reads.advanced
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="Keep the stores here and reuse them on the next run.")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--labels", type=int, default=6)
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    runs = [("1,000 episodes", store(folder, "first-open-1000", 1000, args.steps))]
    runs.append(("10,000 episodes", store(folder, "first-open-10000", 10000, args.steps)))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"median of {args.labels} labels (page opens: half each way), wall ms")
    print(f"{'run':<18} {'label post':>11} {'page, kept read forward':>24} {'page, read whole':>17} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, (db, run_id) in runs:
            copy = Path(scratch) / db.name
            shutil.copyfile(db, copy)
            times = asyncio.run(label_run(copy, run_id, args.labels))
            post, forward, whole = (statistics.median(times[k]) * 1000 for k in ("label", "forward", "whole"))
            print(f"{name:<18} {post:>11.0f} {forward:>24.0f} {whole:>17.0f} {forward / whole:>6.2f}x")
            copy.unlink()
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
