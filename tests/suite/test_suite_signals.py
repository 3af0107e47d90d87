"""A suite started with SIGINT ignored (a background job of a non-interactive shell, ``bash .ci/run &``) still
starts its processes with Ctrl-C handled: ``test_demo_model``'s server and the Browser-Use recording of
``test_browser_use_cancel``, stopped with SIGINT, had run on to their end (loaded suite runs started with ``&``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import HELPERS, REPO

pytestmark = pytest.mark.slow

SUPPORT = HELPERS / "sigint_support.py"


def test_a_suite_started_with_sigint_ignored_starts_processes_that_handle_it(tmp_path: Path) -> None:
    ignoring = ["bash", "-c", 'trap "" INT; exec "$@"', "ignoring"]  # what `&` in a script does to a command
    inner = [sys.executable, "-m", "pytest", str(SUPPORT), "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*ignoring, *inner], cwd=REPO, env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert "1 passed" in done.stdout
