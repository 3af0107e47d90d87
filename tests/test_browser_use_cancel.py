"""A cancellation raised inside Browser-Use fails the episode; cancelling the recording still stops it.

Seen once in CI under load: Browser-Use's bus cancelled the handler starting an episode's browser, the
``CancelledError`` reached ``record_episode``, and, being a ``BaseException``, ended the episode as ``aborted`` and
the whole ``record`` with it. ``not_cancelled_inside`` tells the two apart by ``Task.cancelling()``.
"""

from __future__ import annotations

import asyncio

import pytest

from p2w_runtime.integrations.browser_use import CancelledInside, not_cancelled_inside


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


def test_what_the_work_returns_or_raises_otherwise_passes_through() -> None:
    async def answered() -> str:
        return "done"

    async def broken() -> None:
        raise ValueError("no such element")

    assert asyncio.run(not_cancelled_inside(answered())) == "done"
    with pytest.raises(ValueError, match="no such element"):
        asyncio.run(not_cancelled_inside(broken()))
