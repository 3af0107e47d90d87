"""A cancellation raised inside Browser-Use fails the episode; cancelling the recording still stops it.

Seen once in CI under load: Browser-Use's bus cancelled the handler starting an episode's browser, the
``CancelledError`` reached ``record_episode``, and, being a ``BaseException``, ended the episode as ``aborted`` and
the whole ``record`` with it. ``not_cancelled_inside`` tells the two apart by ``Task.cancelling()``. A recording
stopped by Ctrl-C mid-episode leaves nothing in its temp dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2w_cli.demo_model import DemoModelScript
from p2w_runtime.integrations.browser_use import CancelledInside, not_cancelled_inside
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.suite_tmp import left_behind, process_tmpdir

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


async def _cancelled_by_someone_else() -> str:
    """What Browser-Use does when its bus cancels a handler: a future this task awaits is cancelled."""
    loop = asyncio.get_running_loop()
    waited: asyncio.Future[str] = loop.create_future()
    loop.call_soon(waited.cancel)
    return await waited


def test_a_cancellation_from_inside_the_framework_is_a_failure_of_the_episode() -> None:
    with pytest.raises(CancelledInside, match="browser-use cancelled its own work"):
        asyncio.run(not_cancelled_inside(_cancelled_by_someone_else()))


def test_cancelling_the_recording_task_still_cancels_it() -> None:
    async def main() -> None:
        started = asyncio.Event()

        async def browsing() -> None:
            started.set()
            await asyncio.sleep(3600)

        task = asyncio.create_task(not_cancelled_inside(browsing()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()

    asyncio.run(main())


def test_a_cancellation_the_framework_swallowed_is_raised_when_its_work_returns() -> None:
    """Ctrl-C while Browser-Use awaited something that caught the ``CancelledError`` and went on: the recording still
    stops once the work returns, instead of finishing the episode and exiting 0."""

    async def main() -> None:
        started = asyncio.Event()

        async def swallowing() -> str:
            started.set()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)
            return "answered anyway"

        task = asyncio.create_task(not_cancelled_inside(swallowing()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_what_the_work_returns_or_raises_otherwise_passes_through() -> None:
    async def answered() -> str:
        return "done"

    async def broken() -> None:
        raise ValueError("no such element")

    assert asyncio.run(not_cancelled_inside(answered())) == "done"
    with pytest.raises(ValueError, match="no such element"):
        asyncio.run(not_cancelled_inside(broken()))


@pytest.mark.slow  # Chromium, Browser-Use
def test_a_recording_stopped_mid_episode_leaves_nothing_in_its_temp_dir(tmp_path: Path) -> None:
    """Ctrl-C once Browser-Use's Chromium runs: the episode's folder, the Agent's and Browser-Use's downloads folders
    and Chromium's socket folder are removed as after an episode that ended by itself (docs/design/temp-files.md)."""
    with ScriptedLlm() as model, process_tmpdir() as tmp:
        model.handle_with(DemoModelScript())
        args = ["record", "--agent", "browser-use", "--tasks", "sample", "--task", "Lena_Fischer_A1"]
        args += ["--scheme", "no-history", "--model", "scripted-model", "--base-url", model.base_url]
        recording = subprocess.Popen(
            [P2W_RT, "--db", str(tmp_path / "p2w.db"), *args], env={**os.environ, "TMPDIR": str(tmp)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 300
        while not list(tmp.glob("org.chromium.Chromium.*")):  # its Chromium started (its socket folder)
            assert recording.poll() is None and time.monotonic() < deadline, recording.communicate()
            time.sleep(0.1)
        recording.send_signal(signal.SIGINT)
        _, err = recording.communicate(timeout=120)
        assert recording.returncode == 130, err
        assert left_behind(tmp) == []
