"""The example outside agent (examples/replayable_agent.py) recorded once as run 'mine' against the scripted model:
what the tests of `rerun --exec` and `fork --exec` re-execute."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.paths import REPO

EXAMPLE = REPO / "examples" / "replayable_agent.py"
TASK = "Lena_Fischer_A1"
SCRIPT = (
    Text("Thought: her diet first.\nAction: memory [my dietary restrictions]"),
    Text("She has celiac disease and eats gluten-free."),
    Text("Thought: search Basket.\nAction: goto [http://basket.p2w.test/search?q=gluten-free+organic+penne]"),
    Text("Thought: the first result fits.\nAction: open [1]"),
    Text("Thought: found it.\nAction: stop [gluten-free organic penne]"),
)
"""Four planner steps and one memory answer, in the order the example agent asks them."""


def record_example(db: Path) -> None:
    """Record the example agent's run 'mine' into ``db`` (Chromium, the embedder once)."""
    with ScriptedLlm() as model:
        model.script(*SCRIPT)
        env = {**os.environ, "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000"}
        done = subprocess.run(
            [sys.executable, str(EXAMPLE), "--db", str(db), "--label", "mine"],
            capture_output=True, text=True, cwd=REPO, env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout.splitlines()[-1]) == {"answer": "gluten-free organic penne"}
