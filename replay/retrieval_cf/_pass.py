"""The ``retrieval`` family: counterfactual retrievals in the run's ``{run_id}/retrieval-cf`` stream, and its one
producer as its plugin.

Caching (trajectory hash, producer, version, config hash), the claim that keeps two concurrent passes from
evaluating an episode twice, appending and sealing are ``replay.derived.run_pass``'s, as for judgments and
classifications.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.replay.derived import (
    DerivedRecord,
    DerivedStream,
    Family,
    Outcome,
    Plugin,
    Tally,
    register,
    register_plugin,
)
from p2w_rt.replay.retrieval_cf._producer import CounterfactualRetrieval, RetrievalSettings, UnknownRetrieval
from p2w_rt.schemas import RetrievalCounterfactual
from p2w_runtime.domain import RETRIEVAL_CF_SUFFIX


@dataclass(frozen=True, slots=True)
class CounterfactualRecord(DerivedRecord[RetrievalCounterfactual]):
    kind = "retrieval"


COUNTERFACTUALS = DerivedStream(
    RETRIEVAL_CF_SUFFIX, "retrieval.counterfactual", RetrievalCounterfactual, CounterfactualRecord
)


@dataclass(frozen=True, slots=True)
class CounterfactualOutcome(Outcome[RetrievalCounterfactual]):
    pass


@dataclass(slots=True)
class CounterfactualSummary(Tally[CounterfactualOutcome]):
    run_id: str


def _summary(run_id: str, producers: Sequence[CounterfactualRetrieval]) -> CounterfactualSummary:
    return CounterfactualSummary(run_id=run_id)


RETRIEVALS: Family[RetrievalSettings, CounterfactualRetrieval, CounterfactualOutcome, CounterfactualSummary] = register(
    Family(
        option="--retriever",
        unknown=UnknownRetrieval,
        stream=COUNTERFACTUALS,
        outcome=CounterfactualOutcome,
        summary=_summary,
        noun="counterfactual retrievals",
        retries_failures=True,
    )
)

COUNTERFACTUAL_RETRIEVAL = register_plugin(
    Plugin(name="counterfactual-retrieval", kind="retrieval", producers=(CounterfactualRetrieval,))
)
