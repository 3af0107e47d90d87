"""The Persona2Web data model: task files, ground truth and persona memory banks."""

from p2w_runtime.data._agenticshop import load_curation, load_profiles
from p2w_runtime.data._errors import DataError
from p2w_runtime.data._ground_truth import ground_truth, parse_location
from p2w_runtime.data._json import MAX_DEPTH, NestedTooDeep, parse_json
from p2w_runtime.data._memory_bank import (
    ENTRY_LIST_KEYS,
    find_memory_bank,
    list_personas,
    load_memory_bank,
    memory_bank_hash,
)
from p2w_runtime.data._tasks import LEVEL_FOLDERS, Task, TaskSet, load_task, load_tasks

__all__ = [
    "ENTRY_LIST_KEYS",
    "LEVEL_FOLDERS",
    "MAX_DEPTH",
    "DataError",
    "NestedTooDeep",
    "Task",
    "TaskSet",
    "find_memory_bank",
    "ground_truth",
    "list_personas",
    "load_curation",
    "load_memory_bank",
    "load_profiles",
    "load_task",
    "load_tasks",
    "memory_bank_hash",
    "parse_json",
    "parse_location",
]
