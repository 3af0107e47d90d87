"""The errors of writing an episode: an out-of-order or wrongly caused event, a task id no episode may take."""

from __future__ import annotations

from p2w_runtime.errors import UserError, clip


class EpisodeGrammarError(UserError):
    """An event that the episode grammar does not allow where it was written; nothing of it was staged."""

    def __init__(self, stream: str, event_type: str, reason: str) -> None:
        super().__init__(f"episode {clip(stream)}: {event_type} refused: {reason}")
        self.stream = stream
        self.event_type = event_type
        self.reason = reason


class BadTaskId(UserError, ValueError):
    """A task id that cannot name an episode (``_streams.task_id_problem``), refused before anything of it is
    written; ``where`` names the run or the file it came from."""

    def __init__(self, where: str, task_id: str, reason: str) -> None:
        self.task_id = task_id
        self.detail = f"task id {clip(task_id)!r} cannot name an episode: {reason}"
        """The message without ``where``, for an error that names its file its own way (an importer's)."""
        super().__init__(f"{where}: {self.detail}")
