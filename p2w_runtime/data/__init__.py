"""The Persona2Web data model: task files, ground truth and persona memory banks."""

from p2w_runtime.data._agenticshop import load_curation, load_profiles
from p2w_runtime.data._banks import BankFiles, BankFolder, BankSource
from p2w_runtime.data._curation_tasks import curation_tasks
from p2w_runtime.data._errors import DataError
from p2w_runtime.data._ground_truth import ground_truth
from p2w_runtime.data._json import BadValue, NestedTooDeep, NotFinite, parse_json
from p2w_runtime.data._memory_bank import (
    decode_json,
    find_memory_bank,
    list_personas,
    load_memory_bank,
    memory_bank_hash,
    read_json_lines,
)
from p2w_runtime.data._tasks import Task, TaskSet, load_tasks, tasks_from_files

__all__ = [
    "BadValue",
    "BankFiles",
    "BankFolder",
    "BankSource",
    "decode_json",
    "tasks_from_files",
    "DataError",
    "NestedTooDeep",
    "NotFinite",
    "Task",
    "TaskSet",
    "find_memory_bank",
    "curation_tasks",
    "ground_truth",
    "list_personas",
    "load_curation",
    "load_memory_bank",
    "load_profiles",
    "load_tasks",
    "memory_bank_hash",
    "parse_json",
    "read_json_lines",
]
