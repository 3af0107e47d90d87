"""``RunStarted.config``: the settings a run was recorded with, typed, stored exactly as its writer gave them.

The config was an untyped dict for two schema versions, written by the own agent, its importers, ``fork``,
``rerun --record-as``, the exec recorder, Browser-Use and any outside agent through ``p2w_runtime.recording``.
The model reads that dict as it is stored (no schema version bump, no upcaster: the stored form does not change),
and writes it back byte for byte (docs/design/run-config.md):

- a field the writer left out stays out (``model_fields_set``), so a default is never written into a new event;
- a key this model does not name (an outside agent's) is kept and written back (``extra="allow"``);
- a value is never converted (``strict``; a float field keeps an integer as the integer it was), so the canonical
  JSON of a new ``run.started`` is the canonical JSON of the dict it was built from.

Each default is stated here once: what a reader sees for a run whose writer left the field out.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from p2w_rt.schemas._payload_base import Scheme

Number = int | float
"""A float setting as its writer gave it: ``15`` stays ``15`` (``float`` would write it back as ``15.0``)."""


class RunConfig(BaseModel):
    """The settings of a run; every field is optional in the log, and its default is what a reader assumes."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True, defer_build=True)

    # The own agent's settings (``p2w_runtime.agent.AgentConfig``, whose defaults these equal).
    scheme: Scheme = "on-demand"
    max_steps: int = Field(default=25, description="Steps before an episode ends (max_steps); Browser-Use's too.")
    k: int = 20
    threshold: Number = 0.5
    max_pre_queries: int = 5
    max_invalid: int = 3
    max_repeats: int = 3
    observation_chars: int = 12_000
    page_timeout_s: Number = 15.0
    capture_links: bool = False
    har_bodies: bool = False
    # What was recorded: the selection, so that a resume records exactly these tasks.
    tasks: list[str] | None = Field(default=None, description="The run's task ids; None: recorded before it kept them.")
    task_ids: list[str] = Field(default_factory=list, description="The --task options given.")
    level: int | None = None
    limit: int | None = None
    embedder: str = Field(default="default", description="The --embedder given; 'default': the bundled model.")
    model_tag: str | None = Field(default=None, description="An imported run's model as its file names squeeze it.")
    # The folders given: names for people (never a path of the machine), or AgenticShop's profiles and start page.
    tasks_folder: str | None = None
    history_folder: str | None = None
    profiles: str | None = Field(default=None, description="The name of the AgenticShop profiles file given.")
    start_url: str | None = None
    tasks_dir: str | None = Field(
        default=None, description="Legacy: the task folder's path on the recording machine; never written any more."
    )
    history_dir: str | None = Field(
        default=None, description="Legacy: the memory-bank folder's path on the recording machine; never written."
    )

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields its writer gave and every extra key, nothing a default filled in."""
        dumped: dict[str, Any] = handler(self)
        given = self.model_fields_set
        return {key: value for key, value in dumped.items() if key in given}

    def given(self, name: str) -> bool:
        """Whether the run's writer stored ``name`` (else a reader sees the field's default)."""
        return name in self.model_fields_set

    def extra(self, key: str, default: Any = None) -> Any:
        """A key this model does not name (an outside agent's, or an importer's), as stored."""
        return (self.model_extra or {}).get(key, default)

    def stored(self) -> dict[str, Any]:
        """The config as stored: the dict its writer gave."""
        return self.model_dump(mode="json")
