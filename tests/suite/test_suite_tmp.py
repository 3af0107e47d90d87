"""The suite's own TMPDIR (``suite_tmp.py``): a folder a test or a process it started leaves there fails the session,
named with the test after which it appeared, and is removed; nothing of the session stays in the temp dir it was
given (docs/design/temp-files.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.paths import HELPERS, REPO
from tests.helpers.suite_tmp import holders, left_behind, process_tmpdir

SUPPORT = HELPERS / "suite_tmp_support.py"


def test_what_a_session_leaves_in_its_temp_dir_fails_it_by_name_and_is_removed() -> None:
    with process_tmpdir() as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(SUPPORT), "-q", "-p", "no:cacheprovider"],
            cwd=REPO, env={**os.environ, "TMPDIR": str(tmp)}, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        left = left_behind(tmp)
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "3 passed, 1 error" in output, output
    message = next(line for line in output.splitlines() if "left in the temp dir, and removed:" in line)
    assert "removed-" not in message.split("removed:")[1]
    assert "left-by-a-test-" in message
    assert "(after tests/helpers/suite_tmp_support.py::test_leaves_a_folder)" in message
    assert "(after tests/helpers/suite_tmp_support.py::test_a_process_it_starts_leaves_a_folder)" in message
    assert left == []  # the session's folder, and what was left in it, removed


def test_a_process_folder_is_removed_after_the_processes_given_it_have_ended() -> None:
    """A process still running when the test is done (a Chromium helper outliving a killed recorder) writes a path
    under the folder after a first ``rmtree`` would have run, making the folder again with its parents: the removal
    waits for it, and the folder is gone."""
    script = "import os, time; time.sleep(1.5); os.makedirs(os.path.join(os.environ['TMPDIR'], 'profile', 'Default'))"
    with process_tmpdir() as tmp:
        late = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(tmp)})
        assert holders(tmp) == [late.pid]
    assert late.poll() == 0  # it ended, having written, before the folder went
    assert not tmp.exists()
