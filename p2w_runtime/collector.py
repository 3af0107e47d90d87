"""Pausing the cyclic garbage collector around a block that builds many objects it keeps, and sparing a long
pass the rescans of everything that was alive before it.

Sealing a large batch and folding a chunk of episodes both allocate tracked objects that stay alive until the
block ends, so every collection during it rescans them for nothing (docs/design/projection.md, second round;
docs/design/postgres.md, third round). A full collection during a judging pass rescans the whole process (modules,
models, the store's engine), none of which the pass made (docs/design/projection.md, issue 28).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_frozen = 0
_frozen_lock = threading.Lock()


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


@contextmanager
def collector_frozen() -> Iterator[None]:
    """Leave what is alive now out of the collector's scans for the block (``gc.freeze``), then hand it back: a
    full collection inside scans only what the block made. Nested or concurrent blocks share one freeze, undone
    when the last ends; garbage that existed before is collected after."""
    global _frozen
    with _frozen_lock:
        if _frozen == 0:
            gc.freeze()
        _frozen += 1
    try:
        yield
    finally:
        with _frozen_lock:
            _frozen -= 1
            if _frozen == 0:
                gc.unfreeze()
