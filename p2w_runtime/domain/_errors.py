"""The error an out-of-order or wrongly caused episode event raises when it is written."""

from __future__ import annotations

from p2w_runtime.errors import UserError, clip


class EpisodeGrammarError(UserError):
    """An event that the episode grammar does not allow where it was written; nothing of it was staged."""

    def __init__(self, stream: str, event_type: str, reason: str) -> None:
        super().__init__(f"episode {clip(stream)}: {event_type} refused: {reason}")
        self.stream = stream
        self.event_type = event_type
        self.reason = reason
