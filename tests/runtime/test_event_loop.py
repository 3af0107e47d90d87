"""``event_loop.run``: a coroutine's result comes back without ``asyncio.run`` building its ``repr``.

In a fresh interpreter (pytest installs its own SIGINT handler, and ``asyncio.run`` repeats the repr only under the
default one), as a command runs: ``asyncio.run`` itself reprs the result twice, ``event_loop.run`` never, and
returns the very object, and raises what the coroutine raised."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import asyncio
from p2w_runtime import event_loop

class Summary:
    reprs = 0
    def __repr__(self):
        Summary.reprs += 1
        return "Summary()"

async def make(value):
    return value

kept = Summary()
asyncio.run(make(kept))
by_asyncio, Summary.reprs = Summary.reprs, 0
assert event_loop.run(make(kept)) is kept

async def fail():
    raise LookupError("no such run")

try:
    event_loop.run(fail())
except LookupError as exc:
    raised = str(exc)
print(by_asyncio, Summary.reprs, raised)
"""


def test_a_result_is_returned_without_its_repr_being_built() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    by_asyncio, by_ours, raised = done.stdout.split(maxsplit=2)
    assert int(by_asyncio) > 0, "asyncio.run no longer reprs its result: event_loop.run may go"
    assert int(by_ours) == 0
    assert raised.strip() == "no such run"
