"""Trajectories: the read model judges and classifiers work on, projected from an episode's events."""

from p2w_runtime.domain.trajectory._load import EPISODE_CHUNK, EpisodeChunks, load_trajectories, load_trajectory
from p2w_runtime.domain.trajectory._model import Trajectory
from p2w_runtime.domain.trajectory._project import ProjectionError, project, project_slice
from p2w_runtime.domain.trajectory._records import (
    ActionCommand,
    ActionRecord,
    CaptureRecord,
    EpisodeRecord,
    FinalStateRecord,
    FinishedRecord,
    HistoryAccess,
    LlmCallDetail,
    LlmCallRecord,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
    RetrievedEntry,
)
from p2w_runtime.domain.trajectory._steps import EpisodeShape, episode_shape, first_seq_of_step

__all__ = [
    "ActionCommand",
    "ActionRecord",
    "CaptureRecord",
    "EPISODE_CHUNK",
    "EpisodeChunks",
    "EpisodeRecord",
    "EpisodeShape",
    "FinalStateRecord",
    "FinishedRecord",
    "HistoryAccess",
    "LlmCallDetail",
    "LlmCallRecord",
    "ObservationRecord",
    "ProjectionError",
    "RationaleRecord",
    "RetrievalRecord",
    "RetrievedEntry",
    "Trajectory",
    "episode_shape",
    "first_seq_of_step",
    "load_trajectories",
    "load_trajectory",
    "project",
    "project_slice",
]
