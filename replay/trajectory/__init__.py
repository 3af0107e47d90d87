"""Trajectories: the read model judges and classifiers work on, projected from an episode's events."""

from replay.trajectory._load import EpisodeRef, list_episodes, load_trajectories, load_trajectory
from replay.trajectory._model import (
    NON_BROWSER_ACTIONS,
    ActionRecord,
    CaptureRecord,
    FinalStateRecord,
    HistoryAccess,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
    TimelineItem,
    Trajectory,
)
from replay.trajectory._project import ProjectionError, project

__all__ = [
    "NON_BROWSER_ACTIONS",
    "ActionRecord",
    "CaptureRecord",
    "EpisodeRef",
    "FinalStateRecord",
    "HistoryAccess",
    "ObservationRecord",
    "ProjectionError",
    "RationaleRecord",
    "RetrievalRecord",
    "TimelineItem",
    "Trajectory",
    "list_episodes",
    "load_trajectories",
    "load_trajectory",
    "project",
]
