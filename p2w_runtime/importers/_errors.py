"""Errors of the trajectory importers; both print as one line in the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from p2w_runtime.errors import UserError


class TrajectoryImportError(UserError, ValueError):
    """One trajectory file that cannot be imported; names the file and the field at fault."""

    def __init__(self, path: Path, field: str | None, message: str) -> None:
        self.path = Path(path)
        self.field = field
        self.message = message
        where = f"{self.path}: field {field}: " if field else f"{self.path}: "
        super().__init__(where + message)


class BadTrajectoryFiles(UserError, ValueError):
    """Some files cannot be imported and ``skip_bad`` was not set; nothing was written for them or the others."""

    def __init__(self, errors: Sequence[TrajectoryImportError]) -> None:
        self.errors = list(errors)
        shown = "; ".join(str(e) for e in self.errors[:3])
        more = f"; and {len(self.errors) - 3} more" if len(self.errors) > 3 else ""
        noun = "file" if len(self.errors) == 1 else "files"
        super().__init__(f"{len(self.errors)} bad trajectory {noun} (--skip-bad imports the rest): {shown}{more}")


class ImportConflict(UserError):
    """The label or run the import would write to does not fit it (other format, finished, other dataset)."""
