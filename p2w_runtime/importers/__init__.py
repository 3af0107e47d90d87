"""Importers for trajectories written by the public Persona2Web runners (AgentOccam, Browser-Use), and by the
runners of plugins' formats (``ImportFormat``, ``register_format``).

They write the same events our own recorder does, so every reader (show, judges,
classifiers, diff) works on imported runs unchanged.
"""

from p2w_runtime.importers._agentoccam_log import RunnerLog
from p2w_runtime.importers._curation import CurationImport, import_curation
from p2w_runtime.importers._episode import IMPORTED_RETRIEVER, Header, ImportedEpisode
from p2w_runtime.importers._errors import BadTrajectoryFiles, ImportConflict, TrajectoryImportError
from p2w_runtime.importers._formats import (
    Emit,
    ImportFormat,
    UnknownImportFormat,
    import_format,
    import_formats,
    register_format,
)
from p2w_runtime.importers._naming import FileName
from p2w_runtime.importers._run import import_trajectories

__all__ = [
    "IMPORTED_RETRIEVER",
    "BadTrajectoryFiles",
    "CurationImport",
    "Emit",
    "FileName",
    "Header",
    "ImportConflict",
    "ImportFormat",
    "ImportedEpisode",
    "RunnerLog",
    "TrajectoryImportError",
    "UnknownImportFormat",
    "import_curation",
    "import_format",
    "import_formats",
    "import_trajectories",
    "register_format",
]
