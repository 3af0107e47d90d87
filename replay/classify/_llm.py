"""The LLM classifier: the same error definitions, asked of any OpenAI-compatible model.

The model sees the full trajectory (each line tagged ``[E<n>]``, as the LLM judge sees it) and
the task's expected values, and names the personalization errors it finds with the tags and
text behind each. Navigation end reasons are facts of the log, so they are added by rule, never
asked. Every call is recorded (role ``classifier``) next to the classification.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from p2w_rt.replay.classify._base import Classifier, ErrorLabels, navigation_label
from p2w_rt.replay.classify._labels import DEFINITIONS, PERSONALIZATION_LABELS
from p2w_rt.replay.derived import DEFAULT_MODEL, PassSettings, ProduceContext
from p2w_rt.replay.judges import JudgeError, llm_fields
from p2w_rt.replay.persona2web import LlmSiteConfig, render_full, rubric_targets, site_fields
from p2w_rt.schemas import ErrorLabel, Evidence
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.llm import LlmBadResponse

DEFAULT_CLASSIFIER_MODEL = DEFAULT_MODEL

SYSTEM_PROMPT = (
    "You are the error analyst of Persona2Web's error analysis of personalized web agents (role: classifier).\n"
    "The agent received a possibly ambiguous user request and could consult the user's browsing history: it asked "
    "history queries, a retriever returned history entries, and a generator wrote memory answers. You see the "
    "user's request, the values the request stands for (expected website, preferences, location), and the full "
    "trajectory; every line carries an [E<n>] tag.\n\n"
    "Report which of these error types the episode shows (none, one or several):\n"
    + "\n".join(f"- {label}: {DEFINITIONS[label]}" for label in PERSONALIZATION_LABELS)
    + "\n\nFor each error you report give the label, a one-line explanation, the [E<n>] tags of the events that "
    "show it, and the exact text from those events that triggered it. Do not report an error type the trajectory "
    'does not show. Reply with only the JSON object: {"labels": [{"label": ..., "explanation": ..., '
    '"evidence": ["E3", ...], "text": ...}]}.'
)

USER_TEMPLATE = """\
User request (ambiguity level {level}, scheme {scheme}): {query}

Expected website: {websites}
Expected preferences:
{preferences}
{location}
Trajectory (full, with reasoning traces):
{trajectory}"""


class LabelAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    label: Literal[
        "redundant_history_access",
        "personalization_hallucination",
        "history_retrieval_failure",
        "history_utilization_failure",
    ]
    explanation: str = Field(description="One line: why the episode shows this error")
    evidence: list[str] = Field(default_factory=list, description="[E<n>] tags of the events that show it")
    text: str = Field(default="", description="The text from those events that triggered the label")


class ClassifierAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    labels: list[LabelAnswer]


def prompt_hash() -> str:
    return hashlib.sha256(f"{SYSTEM_PROMPT}\x00{USER_TEMPLATE}".encode()).hexdigest()


def _tag(ref: str) -> str:
    return ref.strip().strip("[]").strip().upper()


class LlmClassifier(Classifier[LlmSiteConfig]):
    id = "llm"
    version = "1"
    description = "Persona2Web error types judged by an OpenAI-compatible model over the full trajectory"
    uses_llm = True

    def __init__(self, settings: PassSettings | None = None) -> None:
        super().__init__(settings or PassSettings(model=DEFAULT_CLASSIFIER_MODEL))

    def configure(self, settings: PassSettings) -> LlmSiteConfig:
        """The site aliases are part of it: they decide the expected site, and so the location the prompt names."""
        return LlmSiteConfig.model_validate({**llm_fields(settings, prompt_hash()), **site_fields(settings)})

    def messages(self, t: Trajectory) -> tuple[list[dict[str, str]], dict[str, str]]:
        rendered = render_full(t)
        try:
            targets = rubric_targets(t, self.config)
            websites = " or ".join(targets.websites)
            prefs = "\n".join(f"  {i}. {v}" for i, v in enumerate(targets.preferences, 1)) or "  (none)"
            location = f"Expected location: {targets.location.raw}\n" if targets.location else ""
        except JudgeError:
            websites, prefs, location = "(unknown)", "  (unknown: no ground truth)", ""
        user = USER_TEMPLATE.format(
            level="?" if t.level is None else t.level,
            scheme=t.scheme or "?",
            query=t.query,
            websites=websites,
            preferences=prefs,
            location=location,
            trajectory=rendered.text,
        )
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}], rendered.refs

    async def produce(self, trajectory: Trajectory, ctx: ProduceContext) -> ErrorLabels:
        messages, refs = self.messages(trajectory)
        try:
            answer = await ctx.need_llm().complete_json(
                "classifier", messages, ClassifierAnswer, params=self.config.params
            )
        except LlmBadResponse as exc:
            return ErrorLabels(status="failed", error=str(exc))
        labels: dict[str, ErrorLabel] = {}
        for item in answer.labels:
            if item.label in labels:
                continue
            ids = [refs[tag] for tag in map(_tag, item.evidence) if tag in refs]
            labels[item.label] = ErrorLabel(
                label=item.label,
                explanation=item.explanation,
                evidence=Evidence(event_ids=ids, text=item.text, note=self.config.model),
            )
        found = [labels[label] for label in PERSONALIZATION_LABELS if label in labels]
        if (nav := navigation_label(trajectory)) is not None:
            found.append(nav)
        return ErrorLabels(labels=found)
