"""The deterministic classifier: Persona2Web's error types computed from the structured events, no LLM; the rules
themselves are imported when an episode is first labelled."""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.replay.classify._base import Classifier, ErrorLabels, navigation_label
from p2w_rt.replay.derived import PassSettings, ProduceContext
from p2w_rt.replay.persona2web import SiteConfig, site_fields
from p2w_runtime.domain.trajectory import Trajectory


@dataclass(frozen=True, slots=True)
class RedundancySettings:
    """When history access is redundant (``redundant_access``): ``min_empty`` empty queries, or a query this close to
    an earlier one."""

    min_empty: int = 2
    duplicate_jaccard: float = 0.8


class RulesConfig(SiteConfig):
    """The site lists the history-use labels read, and the redundant-access thresholds."""

    redundancy: RedundancySettings


class RulesClassifier(Classifier[RulesConfig]):
    id = "rules"
    version = "3"
    description = "Persona2Web error types and navigation end reasons from the structured events, no LLM"

    def __init__(self, settings: PassSettings | None = None) -> None:
        super().__init__(settings or PassSettings())

    def configure(self, settings: PassSettings) -> RulesConfig:
        return RulesConfig.model_validate({**site_fields(settings), "redundancy": RedundancySettings()})

    async def produce(self, trajectory: Trajectory, ctx: ProduceContext) -> ErrorLabels:
        return self.label(trajectory)

    def label(self, t: Trajectory) -> ErrorLabels:
        # The rules and replay.matching's patterns load with the first episode labelled: a pass finding every
        # classification cached needs only the classifier's id, version and configuration.
        from p2w_rt.replay.classify._hallucination import hallucination
        from p2w_rt.replay.classify._history_use import history_use
        from p2w_rt.replay.classify._redundant import redundant_access

        labels = [redundant_access(t, self.config.redundancy), hallucination(t), *history_use(t, self.config)]
        labels.append(navigation_label(t))
        return ErrorLabels(labels=[label for label in labels if label is not None])
