"""``asyncio.run`` for a coroutine whose result may be large (a pass's summary, a verify range's heads).

Python 3.11's ``asyncio.run`` looks its SIGINT handler up again once the coroutine has ended (``signal.getsignal``),
and turning that handler, a ``functools.partial`` holding the main task, into a ``signal.Handlers`` member fails
with a ``ValueError`` whose message is the ``repr`` of the partial: of the task, and so of its result, built whole
before ``reprlib`` cuts it short, twice (docs/design/startup.md, thirteenth round, has what it cost). The result is
handed back beside the task instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, its result never part of the task's ``repr``."""
    result: list[T] = []

    async def main() -> None:
        result.append(await coro)

    asyncio.run(main())
    return result[0]
