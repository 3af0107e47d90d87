"""What a run made from another run states (``fork``, ``rerun --record-as``): one place, so the two cannot drift."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from p2w_rt.schemas import EmbedderRef, RunStarted, Scheme
from p2w_runtime.domain._dataset import CarriedDataset, inherited_config, other_dataset_config
from p2w_runtime.domain._lifecycle import RunSpec
from p2w_runtime.domain._started import Provenance


def derived_spec(
    source: RunStarted,
    label: str,
    *,
    model: str,
    scheme: Scheme | None,
    config: Mapping[str, Any],
    other_dataset: bool,
    carried: CarriedDataset,
    embedder: EmbedderRef | None,
    caused_by: str | None = None,
) -> RunSpec:
    """The ``run.started`` of a run made from ``source``: its agent and task set; its settings as inherited,
    updated by ``config``, and marked when the run searched another dataset (``other_dataset``)."""
    return RunSpec(
        label=label,
        agent=source.agent,
        model=model,
        scheme=scheme,
        provenance=Provenance.here(source.dataset_id, source.dataset_hash),
        config={**inherited_config(source.config), **config, **other_dataset_config(other_dataset)},
        carried=carried,
        embedder=embedder,
        caused_by=caused_by,
    )
