"""The deterministic classifier: Persona2Web's error types computed from the structured events, no LLM."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from p2w_runtime.llm import Sink
from replay.classify._base import Classifier, Verdict, navigation_label
from replay.classify._hallucination import hallucination
from replay.classify._history_use import history_use
from replay.classify._redundant import RedundancySettings, redundant_access
from replay.judges import JudgeSettings
from replay.trajectory import Trajectory


class RulesClassifier(Classifier):
    id = "rules"
    version = "2"
    description = "Persona2Web error types and navigation end reasons from the structured events, no LLM"

    def __init__(self, settings: JudgeSettings | None = None, redundancy: RedundancySettings | None = None) -> None:
        self.settings = settings or JudgeSettings()
        self.redundancy = redundancy or RedundancySettings()

    def config(self) -> dict[str, Any]:
        return {
            "redundancy": asdict(self.redundancy),
            "location_sites": sorted(self.settings.location_sites),
            "site_aliases": {k: sorted(v) for k, v in sorted(self.settings.site_aliases.items())},
        }

    async def classify(self, trajectory: Trajectory, sink: Sink) -> Verdict:
        return self.label(trajectory)

    def label(self, t: Trajectory) -> Verdict:
        labels = [redundant_access(t, self.redundancy), hallucination(t), *history_use(t, self.settings)]
        labels.append(navigation_label(t))
        return Verdict(labels=[label for label in labels if label is not None])
