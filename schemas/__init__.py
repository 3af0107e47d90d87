"""The contract of p2w-rt: event envelope, payload union, dataset records.

Imports nothing else of ours, so any tool can read a p2w-rt log with this package alone.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from p2w_rt.schemas._canonical import (
    GENESIS_HASH,
    blob_hash,
    canonical_json,
    content_hash,
    event_hash,
    format_timestamp,
)
from p2w_rt.schemas._dataset import KNOWN_ENTRY_TYPES, GroundTruth, Location, MemoryEntry, TaskFile, entry_key_text
from p2w_rt.schemas._derived_payloads import (
    ErrorClassified,
    ErrorLabel,
    Evidence,
    Judgment,
    RetrievalCounterfactual,
    TargetRecall,
)
from p2w_rt.schemas._envelope import (
    ChainedEvent,
    Event,
    NewEvent,
    StoredEvent,
    utc_now,
    uuid7,
)
from p2w_rt.schemas._jsonschema import JSON_DIR, drifted_schemas, export_schemas
from p2w_rt.schemas._llm_payloads import LlmCall, LlmChoice, LlmUsage
from p2w_rt.schemas._payload_base import (
    FAILURE_END_REASONS,
    NOT_CARRIED_OUT,
    BlobHash,
    EndReason,
    LlmRole,
    Payload,
    Scheme,
)
from p2w_rt.schemas._payload_decode import CURRENT_VERSIONS, PAYLOAD_ADAPTER
from p2w_rt.schemas._payloads import (
    PAYLOAD_TYPES,
    Action,
    AnyPayload,
    EpisodeFinished,
    EpisodeStarted,
    FinalState,
    ForkPoint,
    HistoryQuery,
    HistoryRetrieval,
    Observation,
    PageCapture,
    ParsedAction,
    Rationale,
    RetrievalHit,
    render_action,
)
from p2w_rt.schemas._run_config import RunConfig
from p2w_rt.schemas._run_payloads import (
    DatasetFiles,
    EmbedderRef,
    EpisodeSealed,
    RunDatasetAttached,
    RunFinished,
    RunStarted,
    StreamSeal,
    StreamsSealed,
)
from p2w_rt.schemas._store_payloads import StoreVerified
from p2w_rt.schemas._upcast import NewerSchemaError, UpcastError, register_upcaster, unregister_upcaster, upcast

if TYPE_CHECKING:
    from p2w_rt.schemas._agenticshop import (
        DIMENSIONS,
        RESULTS_JUDGED,
        Checklist,
        CuratedProduct,
        CurationResult,
        ShopProfile,
        UserContext,
    )

__all__ = [
    "DIMENSIONS",
    "RESULTS_JUDGED",
    "Checklist",
    "CuratedProduct",
    "CurationResult",
    "ShopProfile",
    "UserContext",
    "CURRENT_VERSIONS",
    "FAILURE_END_REASONS",
    "NOT_CARRIED_OUT",
    "GENESIS_HASH",
    "JSON_DIR",
    "KNOWN_ENTRY_TYPES",
    "PAYLOAD_ADAPTER",
    "PAYLOAD_TYPES",
    "Action",
    "AnyPayload",
    "BlobHash",
    "DatasetFiles",
    "EmbedderRef",
    "EndReason",
    "EpisodeFinished",
    "EpisodeSealed",
    "EpisodeStarted",
    "ErrorClassified",
    "ErrorLabel",
    "Event",
    "Evidence",
    "FinalState",
    "ForkPoint",
    "GroundTruth",
    "HistoryQuery",
    "HistoryRetrieval",
    "Judgment",
    "LlmCall",
    "LlmRole",
    "LlmChoice",
    "LlmUsage",
    "Location",
    "MemoryEntry",
    "NewEvent",
    "Observation",
    "PageCapture",
    "ParsedAction",
    "Payload",
    "Rationale",
    "render_action",
    "entry_key_text",
    "RetrievalCounterfactual",
    "RetrievalHit",
    "RunDatasetAttached",
    "RunFinished",
    "StreamSeal",
    "StreamsSealed",
    "StoreVerified",
    "TargetRecall",
    "RunConfig",
    "RunStarted",
    "Scheme",
    "StoredEvent",
    "ChainedEvent",
    "TaskFile",
    "NewerSchemaError",
    "UpcastError",
    "blob_hash",
    "canonical_json",
    "content_hash",
    "drifted_schemas",
    "event_hash",
    "export_schemas",
    "format_timestamp",
    "register_upcaster",
    "unregister_upcaster",
    "upcast",
    "utc_now",
    "uuid7",
]


_AGENTICSHOP = frozenset(
    ("DIMENSIONS", "RESULTS_JUDGED", "Checklist", "CuratedProduct", "CurationResult", "ShopProfile", "UserContext")
)
"""AgenticShop's curation records: built on first use, since reading a Persona2Web run never needs them and their
models are a large part of this package's import (docs/design/startup.md)."""


def __getattr__(name: str) -> Any:
    if name not in _AGENTICSHOP:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module("p2w_rt.schemas._agenticshop"), name)
    globals()[name] = value
    return value
