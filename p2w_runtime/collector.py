"""Pausing the cyclic garbage collector around a block that builds many objects it keeps, and sparing a long
pass the rescans of everything that was alive before it.

Sealing a large batch and folding a chunk of episodes both allocate tracked objects that stay alive until the
block ends, so every collection during it rescans them for nothing (docs/design/projection.md, second round;
docs/design/postgres.md, third round). A full collection during a judging pass rescans the whole process (modules,
models, the store's engine), none of which the pass made (docs/design/projection.md, issue 28). What a paused block
kept is handed to the oldest generation as the block ends, not left in the youngest for the next collection to scan
(docs/design/view.md, "The rebuild, tenured").
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
    stays disabled, and an exception in the block restores it all the same.

    Everything tracked is moved to the oldest generation before the collector is on again (``_tenured``): a paused
    block's objects all wait in the youngest, and the first collection after it scanned them all, then the next
    generation's scanned them again, to find them alive."""
    collecting = pause and gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            _tenured()
            gc.enable()


def _tenured() -> None:
    """Every tracked object moved to the oldest generation, unscanned: ``gc.freeze`` takes them all out of the
    generations and ``gc.unfreeze`` puts them back in the oldest, each a splice of lists. Within a frozen block
    (``collector_frozen``) they stay frozen with the rest until it ends; a heap someone else froze is left as it is.
    Garbage cycles among them wait for the next full collection."""
    with _frozen_lock:
        if _frozen:
            gc.freeze()
        elif gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()


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
