"""Not collected by the suite: ``test_suite_tmp.py`` runs it in a pytest of its own. One test leaves a folder in the
temp dir itself, one through a process it starts, one cleans up after itself."""

from __future__ import annotations

import subprocess
import sys
import tempfile


def test_cleans_up() -> None:
    with tempfile.TemporaryDirectory(prefix="removed-"):
        pass


def test_leaves_a_folder() -> None:
    tempfile.mkdtemp(prefix="left-by-a-test-")


def test_a_process_it_starts_leaves_a_folder() -> None:
    code = "import tempfile; tempfile.mkdtemp(prefix='left-by-a-process-')"
    subprocess.run([sys.executable, "-c", code], check=True)
