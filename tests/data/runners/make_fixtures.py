"""Write the runner output folders under tests/data/runners/ exactly as the Persona2Web runners write them.

Each writer module (``agentoccam_writer.py``, ``browser_use_writer.py``) follows one writer of
``serin-kimm/Persona2Web`` (key names and order, nesting, types, file names, sibling files, ``json.dump`` arguments);
the contents are made up for the sample personas of ``p2w_runtime/demo/sample``. ``tests/runtime/test_importers.py``
checks that the committed files are what this script writes, so edit the script and rerun it rather than the files:

    python tests/data/runners/make_fixtures.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agentoccam_writer import agentoccam_no_history, agentoccam_on_demand, agentoccam_pre_execution
from browser_use_writer import (
    browser_use_default_model,
    browser_use_no_history,
    browser_use_on_demand,
    browser_use_pre_execution,
)

HERE = Path(__file__).resolve().parent


def main(root: Path = HERE) -> None:
    """(Re)write both runners' folders under ``root``."""
    for name in ("agentoccam", "browser_use"):
        shutil.rmtree(root / name, ignore_errors=True)
    logs = root / "agentoccam" / "logs"
    agentoccam_on_demand(logs)
    agentoccam_pre_execution(logs)
    agentoccam_no_history(logs)
    result = root / "browser_use" / "result"
    browser_use_on_demand(result)
    browser_use_pre_execution(result)
    browser_use_no_history(result)
    browser_use_default_model(result)


if __name__ == "__main__":
    main()
