"""The turns of a suite run in several processes (``tests/helpers/suite_lock.py``): a test marked ``alone`` waits
for the others' tests to end, and they wait for it."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.helpers.suite_lock import turn


def _in_thread(path: Path, alone: bool, order: list[str], name: str) -> threading.Thread:
    def take() -> None:
        with turn(str(path), alone=alone):
            order.append(name)

    thread = threading.Thread(target=take)
    thread.start()
    return thread


def test_a_test_alone_starts_once_the_others_have_ended_and_they_wait_for_it(tmp_path: Path) -> None:
    path, order = tmp_path / "suite.lock", []
    with turn(str(path), alone=False), turn(str(path), alone=False):  # two tests of other processes, at once
        order.append("others")
        alone = _in_thread(path, True, order, "alone")
        alone.join(0.3)
        assert alone.is_alive() and order == ["others"]  # waiting for both to end
    alone.join(10)
    assert order == ["others", "alone"]
    with turn(str(path), alone=True):
        other = _in_thread(path, False, order, "next")
        other.join(0.3)
        assert other.is_alive()  # the next test of another process waits for the one alone
        order.append("alone again")
    other.join(10)
    assert order == ["others", "alone", "alone again", "next"]


def test_in_one_process_nothing_is_locked() -> None:
    """Two turns alone at once would wait for each other forever if either locked anything."""
    done: list[str] = []

    def both() -> None:
        with turn(None, alone=True), turn(None, alone=True):
            done.append("both")

    thread = threading.Thread(target=both, daemon=True)
    thread.start()
    thread.join(10)
    assert done == ["both"]
