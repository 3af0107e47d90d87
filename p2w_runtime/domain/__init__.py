"""The domain, above the store: runs and their episodes. Stream names, the event grammar, the one writer, the
started events, the listing, the seal a finished episode gets in its run's stream, the runs a store holds
(``list_runs``, ``find_run``), a run's lifecycle (``start_run``, ``resume_run``, ``RunRecording.close``: every
writer of runs opens and closes them there), and the episode read model (``p2w_runtime.domain.trajectory``).

Everything that writes an episode (the agent, both importers, the synthetic and test builders) goes through
``EpisodeWriter``; everything that lists a run's episodes goes through ``episodes_of``
(docs/design/episode-grammar.md).
"""

from typing import TYPE_CHECKING

from p2w_runtime.domain._compact import Compacted, compact_finished
from p2w_runtime.domain._errors import BadTaskId, EpisodeGrammarError
from p2w_runtime.domain._grammar import EPISODE_TYPES, TAIL_TYPES, EpisodeGrammar
from p2w_runtime.domain._lifecycle import (
    RunRecording,
    RunSpec,
    TakenOver,
    check_label_free,
    resume_run,
    run_started,
    start_run,
)
from p2w_runtime.domain._listing import EpisodeRef, counted, episodes_of
from p2w_runtime.domain._recorder_claim import (
    check_not_recorded_alone,
    holding_run,
    joining,
    live_joiners,
    resuming,
)
from p2w_runtime.domain._runs import (
    BadRunStarted,
    RunInfo,
    UnknownRun,
    check_named_once,
    find_run,
    find_runs,
    list_runs,
    match_run,
)
from p2w_runtime.domain._seal import append_sealed, episode_seals
from p2w_runtime.domain._started import Provenance, TaskLike, episode_started
from p2w_runtime.domain._streams import (
    ATTEMPT_MARK,
    CLASSIFICATIONS_SUFFIX,
    DERIVED_NAMES,
    JUDGMENTS_SUFFIX,
    RETRIEVAL_CF_SUFFIX,
    attempt_id,
    check_task_id,
    check_task_ids,
    episode_of,
    episode_stream,
    run_of,
    task_id_problem,
    under,
)
from p2w_runtime.domain._summaries import Met, check_summaries, rebuild_summaries
from p2w_runtime.domain._summary_rows import NOT_AN_OUTCOME
from p2w_runtime.domain._writer import EpisodeWriter
from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_runtime.domain._attach import Attached, attach_dataset
    from p2w_runtime.domain._dataset import (
        CarriedDataset,
        carried_files,
        carry_dataset,
        derived_dataset,
        folder_names,
        run_banks,
        run_tasks,
    )
    from p2w_runtime.domain._derived import derived_spec

_DATASET = {
    "Attached": "_attach",
    "attach_dataset": "_attach",
    **dict.fromkeys(
        (
            "CarriedDataset", "carried_files", "carry_dataset", "derived_dataset", "folder_names", "run_banks",
            "run_tasks",
        ),
        "_dataset",
    ),
    "derived_spec": "_derived",
}  # fmt: skip
"""The dataset side of a run (attaching, carrying its files), loaded on first use: it reads dataset files through
``p2w_runtime.data``, whose models cost more to import than ``runs`` and ``show`` spend in all
(docs/design/startup.md)."""

__all__ = [
    "RunRecording",
    "RunSpec",
    "TakenOver",
    "resume_run",
    "check_not_recorded_alone",
    "holding_run",
    "joining",
    "live_joiners",
    "resuming",
    "start_run",
    "Compacted",
    "compact_finished",
    "Attached",
    "attach_dataset",
    "CarriedDataset",
    "carried_files",
    "carry_dataset",
    "derived_dataset",
    "folder_names",
    "derived_spec",
    "run_banks",
    "run_tasks",
    "RunInfo",
    "UnknownRun",
    "BadRunStarted",
    "check_label_free",
    "check_named_once",
    "find_run",
    "find_runs",
    "list_runs",
    "match_run",
    "ATTEMPT_MARK",
    "BadTaskId",
    "CLASSIFICATIONS_SUFFIX",
    "DERIVED_NAMES",
    "EPISODE_TYPES",
    "TAIL_TYPES",
    "JUDGMENTS_SUFFIX",
    "NOT_AN_OUTCOME",
    "RETRIEVAL_CF_SUFFIX",
    "EpisodeGrammar",
    "EpisodeGrammarError",
    "EpisodeRef",
    "EpisodeWriter",
    "Provenance",
    "TaskLike",
    "append_sealed",
    "attempt_id",
    "check_task_id",
    "check_task_ids",
    "check_summaries",
    "Met",
    "counted",
    "episode_of",
    "episode_seals",
    "episode_started",
    "episode_stream",
    "episodes_of",
    "run_of",
    "rebuild_summaries",
    "run_started",
    "task_id_problem",
    "under",
]


__getattr__ = lazy_names(__name__, _DATASET, globals())
