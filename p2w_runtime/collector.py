"""Pausing the cyclic garbage collector around a block that builds many objects it keeps.

Sealing a large batch and folding a chunk of episodes both allocate tracked objects that stay alive until the
block ends, so every collection during it rescans them for nothing (docs/design/projection.md, second round;
docs/design/postgres.md, third round).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Pause the collector for the block (if ``pause``), then restore it as found: a caller's disabled collector
    stays disabled, and an exception in the block restores it all the same."""
    collecting = pause and gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
