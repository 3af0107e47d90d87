"""Importers for trajectories written by the public Persona2Web runners (AgentOccam, Browser-Use).

They write the same events our own recorder does, so every reader (show, judges,
classifiers, diff) works on imported runs unchanged.
"""

from p2w_runtime.importers._actions import (
    AGENTOCCAM_ONLY_ACTIONS,
    BROWSER_USE_NAMES,
    map_browser_use_action,
    parse_agentoccam_action,
)
from p2w_runtime.importers._errors import BadTrajectoryFiles, ImportConflict, TrajectoryImportError
from p2w_runtime.importers._naming import SCHEME_PREFIXES, FileName, parse_file_name
from p2w_runtime.importers._run import FORMATS, ImportReport, Progress, import_trajectories

__all__ = [
    "AGENTOCCAM_ONLY_ACTIONS",
    "BROWSER_USE_NAMES",
    "FORMATS",
    "SCHEME_PREFIXES",
    "BadTrajectoryFiles",
    "FileName",
    "ImportConflict",
    "ImportReport",
    "Progress",
    "TrajectoryImportError",
    "import_trajectories",
    "map_browser_use_action",
    "parse_agentoccam_action",
    "parse_file_name",
]
