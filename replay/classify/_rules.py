"""The deterministic classifier: Persona2Web's error types computed from the structured events, no LLM."""

from __future__ import annotations

from p2w_rt.replay.classify._base import Classifier, ErrorLabels, navigation_label
from p2w_rt.replay.classify._hallucination import hallucination
from p2w_rt.replay.classify._history_use import history_use
from p2w_rt.replay.classify._redundant import RedundancySettings, redundant_access
from p2w_rt.replay.derived import PassSettings, ProduceContext
from p2w_rt.replay.persona2web import SiteConfig, site_fields
from p2w_runtime.domain.trajectory import Trajectory


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
        labels = [redundant_access(t, self.config.redundancy), hallucination(t), *history_use(t, self.config)]
        labels.append(navigation_label(t))
        return ErrorLabels(labels=[label for label in labels if label is not None])
