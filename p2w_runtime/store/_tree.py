"""Streams form trees by name: ``ROOT`` and every ``ROOT/...`` under it. The store reads a tree without knowing
what its streams mean (a run and its episodes are the domain's reading of a tree, ``p2w_runtime.domain``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store._event_store import EventStore

TREE_SEPARATOR = "/"


def tree_root(stream: str) -> str:
    """The root of the tree a stream belongs to (a root belongs to itself)."""
    return stream.partition(TREE_SEPARATOR)[0]


def tree_prefix(root: str) -> str:
    """The prefix every stream under ``root`` starts with (the root stream itself is not under it)."""
    return f"{root}{TREE_SEPARATOR}"


async def read_tree(store: EventStore, root: str) -> AsyncIterator[StoredEvent]:
    """Every event of tree ``root``: the root stream, then every stream under it, in position order."""
    async for event in store.read_stream(root):
        yield event
    async for event in store.read_all(stream_prefix=tree_prefix(root)):
        yield event
