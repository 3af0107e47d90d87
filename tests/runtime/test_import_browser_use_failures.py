"""What Persona2Web's Browser-Use runner writes when a step's model call fails, and the agent's own success flag
(issue 41), in files written as the runner's writer code writes them (``tests/data/runners/browser_use_writer.py``).

``Agent.step`` keeps ``state.last_model_output`` when the model call raises, and ``_finalize`` logs the failed step
with it: the step repeats the previous step's output word for word, and nothing of it ran. ``done``'s ``success``
is not in the trajectory (the runner keeps only ``text``, ``url`` and ``query`` of an action): it is in
``_summary.json``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from p2w_runtime.domain import episodes_of
from p2w_runtime.store import EventStore
from tests.helpers.import_support import BROWSER_USE, RUNNERS, events_of, import_folder

STAGEPASS = "http://stagepass.p2w.test"


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    return memory_store


@pytest.fixture
def bu(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(RUNNERS))
    return importlib.import_module("browser_use_writer")


def _write(bu: Any, root: Path) -> Path:
    run = bu.BrowserUseRun(root / "on-demand_gpt41_1", experiment_id="1", provider="openai", model="gpt-4.1",
                           scheme="on-demand")  # fmt: skip
    back = [{"action": "go_back"}]
    run.finished("Tomas_Reyes_A1", [
        bu.navigation_step(1, "about:blank", "Open the comedy listing.",
                           [{"action": "navigate", "url": f"{STAGEPASS}/search?city=Denver&genre=comedy"}]),
        bu.navigation_step(2, f"{STAGEPASS}/event/sp-a12", "Back to the results.", back),
        bu.navigation_step(3, f"{STAGEPASS}/search?city=Denver&genre=comedy", "Back once more.", back),
        bu.navigation_step(4, f"{STAGEPASS}/", "Back again, to the search.", back),
        bu.navigation_step(5, "http://search.p2w.test/", "Back to the start page.", back),
        bu.navigation_step(6, "http://search.p2w.test/", "Back to the start page.", back),  # the model call failed
        bu.navigation_step(7, "http://search.p2w.test/", "Nothing fits; stop.",
                           [{"action": "done", "text": "I could not find tickets under $40."}]),
    ], success=False)  # fmt: skip
    run.finished("Lena_Fischer_B1", [
        bu.navigation_step(1, "about:blank", "Open TableFor.", [{"action": "navigate", "url": "http://tablefor.p2w.test/"}]),
        bu.navigation_step(2, "http://tablefor.p2w.test/", "Scroll to the list.", [{"action": "scroll"}]),
        bu.navigation_step(3, "http://tablefor.p2w.test/", "Scroll to the list.", [{"action": "scroll"}]),
        bu.navigation_step(4, "http://tablefor.p2w.test/", "Scroll to the list.", [{"action": "scroll"}]),
        bu.navigation_step(5, "http://tablefor.p2w.test/", "Scroll to the list.", [{"action": "scroll"}]),
    ], success=None)  # fmt: skip
    run.close()
    return run.out_dir


async def test_a_failed_step_is_not_carried_out_and_the_agents_flag_is_kept(
    store: EventStore, bu: Any, tmp_path: Path
) -> None:
    report = await import_folder(store, BROWSER_USE, _write(bu, tmp_path / "result"), label="bu")
    streams = {ref.task_id: ref.stream for ref in await episodes_of(store, report.run_id)}
    tomas = await events_of(store, streams["Tomas_Reyes_A1"])
    backs = [(e.payload.step, e.payload.status) for e in tomas if e.type == "action" and "go_back" in e.payload.raw]
    assert backs == [(2, "executed"), (3, "executed"), (4, "executed"), (5, "executed"), (6, "blocked")]
    refused = next(e.payload for e in tomas if e.type == "action" and e.payload.step == 6)
    assert refused.error is not None and refused.error.startswith("not carried out: the step's model call failed")
    assert [e.payload.step for e in tomas if e.type == "rationale"] == [1, 2, 3, 4, 5, 7], "no reasoning of its own"
    finished = tomas[-1].payload
    assert (finished.end_reason, finished.answer) == ("answered", "I could not find tickets under $40.")
    assert finished.detail == "the agent's done reported success: false (_summary.json)"
    lena = (await events_of(store, streams["Lena_Fischer_B1"]))[-1].payload
    assert (lena.end_reason, lena.detail) == (
        "error",
        "stopped after 3 consecutive failed steps (Agent max_failures 3)",
    )
