"""A run's results are read with the cyclic collector paused (``DerivedStream.read``): every record read is kept by
the caller, so a collection set off while they are made would only rescan them (docs/design/startup.md, thirteenth
round). Reading 2,000 judgments sets off no collection but the one an allocation may start as the pause begins or
ends (the read's own frame is on the stack then); run unpaused, the same read set off 15."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, JUDGMENT_SCORES, make_judge
from p2w_runtime.store import open_store
from tests.helpers.view_support import build_simple_run

EPISODES = 2000
READ = ("read", "replay/derived/_stream.py")


def _place(frame: object) -> tuple[str, str]:
    code = frame.f_code  # type: ignore[attr-defined]
    return code.co_name, "/".join(Path(code.co_filename).parts[-3:])


async def test_a_runs_results_are_read_without_setting_off_collections(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    await build_simple_run(db, "many", episodes=EPISODES)
    inside: list[bool] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            frame, places = sys._getframe(1), set()
            while frame is not None:
                places.add(_place(frame))
                frame = frame.f_back
            inside.append(READ in places)

    async with open_store(db) as store:
        judged = await run_pass(JUDGES, store, "01many-run", [make_judge("rubric-rules", PassSettings())])
        assert len(judged.outcomes) == EPISODES
        gc.callbacks.append(seen)
        try:
            rows = await JUDGMENT_SCORES.read(store, "01many-run")
        finally:
            gc.callbacks.remove(seen)
    assert len(rows) == EPISODES
    assert sum(inside) <= 2, f"{sum(inside)} collections set off inside the read"
    assert gc.isenabled()
