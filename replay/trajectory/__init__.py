"""Trajectories: the read model judges and classifiers work on, projected from an episode's events."""

from replay.trajectory._load import load_trajectories, load_trajectory
from replay.trajectory._model import (
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
    "ActionRecord",
    "CaptureRecord",
    "FinalStateRecord",
    "HistoryAccess",
    "ObservationRecord",
    "ProjectionError",
    "RationaleRecord",
    "RetrievalRecord",
    "TimelineItem",
    "Trajectory",
    "load_trajectories",
    "load_trajectory",
    "project",
]
