"""What ``p2w-rt diff`` does, so that cli.py only parses options and calls this."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from replay.diff._diff import RunDiff, diff_runs
from replay.diff._refs import open_runs, parse_ref
from replay.diff._report import render_diff
from replay.diff._runs import DEFAULT_JUDGE, load_run_data


async def diff_command(
    default_db: Path | str, a_ref: str, b_ref: str, *, judge: str = DEFAULT_JUDGE, as_json: bool = False, out: Console
) -> RunDiff:
    """Load both runs (each from its own file if named ``file.db:RUN``), diff them, print the report or JSON."""
    refs = [parse_ref(a_ref, default_db), parse_ref(b_ref, default_db)]
    async with open_runs(refs) as opened:
        a, b = [await load_run_data(o.store, o.info, judge, source=o.ref.text) for o in opened]
    diff = diff_runs(a, b)
    if as_json:
        out.print(json.dumps(diff.to_json(), ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
    else:
        out.print(render_diff(diff))
    return diff
