"""Importers for trajectories written by the public Persona2Web runners (AgentOccam, Browser-Use).

They write the same events our own recorder does, so every reader (show, judges,
classifiers, diff) works on imported runs unchanged.
"""

from p2w_runtime.importers._curation import import_curation
from p2w_runtime.importers._episode import IMPORTED_RETRIEVER
from p2w_runtime.importers._errors import BadTrajectoryFiles, ImportConflict, TrajectoryImportError
from p2w_runtime.importers._run import import_trajectories

__all__ = [
    "IMPORTED_RETRIEVER",
    "BadTrajectoryFiles",
    "ImportConflict",
    "TrajectoryImportError",
    "import_curation",
    "import_trajectories",
]
