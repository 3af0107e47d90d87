"""What ``p2w-rt diff`` asks of the library: the two runs loaded and compared (data, no output)."""

from __future__ import annotations

from pathlib import Path

from p2w_rt.replay.diff._diff import RunDiff, diff_runs
from p2w_rt.replay.diff._refs import open_runs, parse_ref
from p2w_rt.replay.diff._runs import DEFAULT_JUDGE, load_run_data
from p2w_rt.replay.metrics import compared_scores


async def diff_refs(default_db: Path | str, a_ref: str, b_ref: str, *, judge: str = DEFAULT_JUDGE) -> RunDiff:
    """Load both runs (each from its own file if named ``file.db:RUN``), scored with one version of the judge, and
    diff them."""
    refs = [parse_ref(a_ref, default_db), parse_ref(b_ref, default_db)]
    async with open_runs(refs) as opened:
        compared = await compared_scores([(o.store, o.info.run_id) for o in opened], judge)
        a, b = [
            await load_run_data(o.store, o.info, judge, o.ref.text, c) for o, c in zip(opened, compared, strict=True)
        ]
    return diff_runs(a, b)
