"""A step the runner logged but never carried out is no action (issue 41): not a final confirmation, not an attempt.

Built from the real AgentOccam file ``Lena_Fischer_A1`` (``tests/data/runners-real``): its step 9, ``go_back`` with
``done: true`` after ``max_steps`` 8, is logged only. Steps 4 and 5 are rewritten so that the cart is reached on
the task's site; the episode then gets Intent 10 with the logged-only step and without it, and the note says the
step was not carried out (not refused by the site).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.store import EventStore
from tests.helpers.import_support import AGENTOCCAM, import_folder
from tests.helpers.paths import DATA
from tests.helpers.rubric_support import judged

REAL = DATA / "runners-real" / "agentoccam" / "on-demand_gpt41"
BASKET = "http://basket.p2w.test"


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    return memory_store


def _lena_reaching_the_cart(root: Path, *, steps: int) -> Path:
    """The real folder with only Lena_Fischer_A1, its step 4 adding two boxes and step 5 on the cart page."""
    folder = root / "on-demand_gpt41"
    folder.mkdir(parents=True)
    shutil.copy(REAL / "on-demand_gpt41.yml", folder)
    data = json.loads((REAL / "on_gpt41_Lena_Fischer_A1.json").read_text())
    trajectory = data["trajectory"]
    trajectory[3].update(url=f"{BASKET}/product/bsk-a01", reason="Add two boxes of the penne to the cart.",
                         action="click [66]")  # fmt: skip
    trajectory[4]["url"] = f"{BASKET}/cart"
    del trajectory[steps:]
    trajectory[-1]["done"] = "True"
    (folder / "on_gpt41_Lena_Fischer_A1.json").write_text(json.dumps(data))
    return folder


async def test_the_step_logged_past_max_steps_does_not_zero_intent(store: EventStore, tmp_path: Path) -> None:
    report = await import_folder(store, AGENTOCCAM, _lena_reaching_the_cart(tmp_path / "full", steps=9), label="9")
    (ref,) = await episodes_of(store, report.run_id)
    actions = (await load_trajectory(store, ref.stream)).actions
    assert [(a.step, a.name, a.status, a.not_carried_out) for a in actions[-2:]] == [
        (8, "type", "executed", False),
        (9, "go_back", "blocked", True),
    ]
    cut = await import_folder(store, AGENTOCCAM, _lena_reaching_the_cart(tmp_path / "cut", steps=8), label="8")
    full, short = await judged(store, [report]), await judged(store, [cut])
    assert full["Lena_Fischer_A1"].points["intent"] == 10.0
    assert short["Lena_Fischer_A1"].points["intent"] == 10.0
    note = full["Lena_Fischer_A1"].evidence["intent"].note
    assert note.startswith("cart goal achieved")
    assert "not counted: step 9 ('go_back') not carried out: env.step stops past max_steps 8" in note
    assert "final confirmation" not in note
    assert "not counted" not in short["Lena_Fischer_A1"].evidence["intent"].note
