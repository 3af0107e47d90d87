"""The one exception of the retriever, so the CLI can print it as a single line."""

from __future__ import annotations

from p2w_runtime.errors import UserError


class RetrievalError(UserError):
    """An embedder that cannot be loaded offline, or an index that cannot be built; the message names which."""
