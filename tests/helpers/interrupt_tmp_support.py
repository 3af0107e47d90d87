"""Not collected by the suite: ``test_suite_interrupts.py`` runs it in a pytest of its own. A Ctrl-C arrives while
a test that has ``tmp_path`` is being set up (``P2W_INTERRUPT_AT=setup``) or runs (``call``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest


@pytest.fixture
def interrupted_setup(tmp_path: Path) -> Path:
    if os.environ.get("P2W_INTERRUPT_AT") == "setup":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    return tmp_path


def test_interrupted(interrupted_setup: Path) -> None:
    (interrupted_setup / "made").touch()
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)


def test_never_reached_after_an_interrupt() -> None:
    time.sleep(30)
