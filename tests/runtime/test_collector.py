"""The collector helpers: a paused collector and a frozen heap are handed back as they were found."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from p2w_runtime.collector import collector_frozen, collector_paused


def test_a_frozen_block_leaves_what_was_alive_out_of_collections_and_hands_it_back() -> None:
    """Counts are compared only as bounds: another thread (a server, a driver's) may free frozen objects at any time,
    which lowers the count (a full run on a loaded machine saw it 2 lower), but only ``gc.freeze`` raises it, and a
    second freeze would add the thousands of objects made since the first."""
    gc.unfreeze()
    alive = [[] for _ in range(1000)]  # tracked objects that exist before the block
    doomed = [[] for _ in range(100)]
    with collector_frozen():
        frozen = gc.get_freeze_count()
        assert frozen >= len(alive)
        freeing = threading.Thread(target=doomed.clear)  # as another thread of the suite may, meanwhile
        freeing.start()
        freeing.join()
        assert gc.get_freeze_count() <= frozen - 100
        since = [[] for _ in range(5000)]  # what a second freeze would add
        with collector_frozen():  # nested (or a second pass in the process): one freeze, not a second
            assert len(alive) <= gc.get_freeze_count() <= frozen
        assert len(alive) <= gc.get_freeze_count() <= frozen  # still frozen until the outer block ends
        made = [[] for _ in range(10)]
        assert all(gc.is_tracked(m) for m in made) and gc.get_freeze_count() <= frozen  # new objects are scanned
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), collector_frozen():
        raise RuntimeError("a failing pass")
    assert gc.get_freeze_count() == 0 and alive and since


def test_a_paused_collector_is_restored_as_found() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it paused and leaves it so
    assert gc.isenabled()
    with collector_paused(False):
        assert gc.isenabled()


def test_what_a_paused_block_kept_is_handed_to_the_oldest_generation_unscanned() -> None:
    """The first collection after a paused block scanned everything it made, to find it alive (docs/design/view.md,
    "The rebuild, tenured"): kept objects now leave the block in the oldest generation, nothing stays frozen, and
    garbage cycles made in the block are still collected by a full collection."""
    gc.unfreeze()
    with collector_paused():
        kept = [[] for _ in range(5000)]
        cycle = _Node()
        cycle.next = cycle
    gone = weakref.ref(cycle)
    del cycle
    ids = {id(k) for k in kept}
    assert not any(id(o) in ids for o in gc.get_objects(generation=0))
    assert not any(id(o) in ids for o in gc.get_objects(generation=1))
    assert sum(id(o) in ids for o in gc.get_objects(generation=2)) == len(kept)
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    gc.collect()
    assert gone() is None  # the cycle, tenured with the rest, is still found


class _Node:
    next: object = None


def test_a_block_paused_inside_a_frozen_one_leaves_its_objects_frozen_until_that_ends() -> None:
    gc.unfreeze()
    with collector_frozen():
        with collector_paused():
            kept = [[] for _ in range(1000)]
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)
    assert gc.get_freeze_count() == 0
    ids = {id(k) for k in kept}
    assert sum(id(o) in ids for o in gc.get_objects(generation=2)) == len(kept)


def test_a_heap_frozen_by_someone_else_is_left_frozen() -> None:
    """Which objects are frozen is read from the generations (a frozen object is in none of them), not from the
    count alone: another thread of the suite may free frozen objects meanwhile, which lowers the count (a full run
    saw it 2 lower)."""
    gc.unfreeze()
    outside = [[] for _ in range(100)]
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with collector_paused():
            made = [[] for _ in range(100)]
        assert gc.get_freeze_count() <= before  # nothing was frozen on top: ``made`` would add 101
        in_generations = {id(o) for o in gc.get_objects()}
        assert not any(id(o) in in_generations for o in outside)  # still frozen: not unfrozen by the block
        assert all(id(m) in in_generations for m in made)  # the block's own objects are collectable
    finally:
        gc.unfreeze()
