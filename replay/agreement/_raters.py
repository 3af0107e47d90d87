"""Raters as ``agree`` compares them: the current judgments of one judge (or one judge version, or one
human annotator) on a run, flattened into comparable items per episode.

Items: each metric (``metric:success``), each rubric point or checklist item as a share of its maximum
(``point:pref.0``), and each dimension, the points under one key prefix pooled (``dimension:pref``). A human's error
label is the point ``error.LABEL`` (1 seen, 0 looked for and not seen); a classifier (``classify:ID``) is a rater of
those points only, 1 for each label its current classification of the episode holds and 0 for every other label it
looks for, so ``agree`` gives a κ per error label between people and classifiers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from p2w_rt.replay.classify import ALL_LABELS, current_classifications, read_labels
from p2w_rt.replay.derived import current_of, run_heads
from p2w_rt.replay.judges import JUDGES, JudgmentRecord, named_judge, read_judgments
from p2w_rt.replay.metrics import failed_now, judge_label
from p2w_rt.schemas import Judgment
from p2w_runtime.command_line import command_line
from p2w_runtime.errors import UserError, clip
from p2w_runtime.store import EventStore

HUMAN_PREFIX = "human:"
"""Imported human labels are judgments whose judge id is ``human:ANNOTATOR``."""
CLASSIFIER_PREFIX = "classify:"
"""``classify:ID`` names classifier ID as a rater of the error-label points."""
ERROR_POINT = "error."
"""A label point ``error.LABEL``: the error label LABEL seen (1) or not (0)."""


@dataclass(slots=True)
class Rater:
    """One rater's values: episode stream -> item -> value, and each episode's task id."""

    name: str
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    tasks: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    """Every current sample per episode (several when judged with ``replay --samples N``), oldest first."""

    @property
    def is_human(self) -> bool:
        return self.name.startswith(HUMAN_PREFIX)

    @property
    def is_classifier(self) -> bool:
        return self.name.startswith(CLASSIFIER_PREFIX)


def items(j: Judgment) -> dict[str, float]:
    """A judgment as comparable items (see the module docstring)."""
    out = {f"metric:{k}": float(v) for k, v in j.metrics.items()}
    dims: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key, top in j.max_points.items():
        got = j.points.get(key, 0.0)
        if top:
            out[f"point:{key}"] = got / top
        dim = dims[key.split(".", 1)[0]]
        dim[0] += got
        dim[1] += top
    for name, (got, top) in dims.items():
        if top and f"point:{name}" not in out:
            out[f"dimension:{name}"] = got / top
    return out


def _named(selector: str, judgments: Sequence[Judgment]) -> tuple[str, str | None]:
    """The judge and version ``selector`` names (``ID`` or ``ID@VERSION``), given the versions of ``judgments``."""
    recorded: dict[str, set[str]] = defaultdict(set)
    for j in judgments:
        recorded[j.judge_id].add(j.judge_version)
    return named_judge(selector, recorded)


def _selected(selector: str, judgments: Sequence[Judgment]) -> list[Judgment]:
    judge_id, version = _named(selector, judgments)
    return [j for j in judgments if j.judge_id == judge_id and version in (None, j.judge_version)]


async def current_records(store: EventStore, run_id: str) -> list[JudgmentRecord]:
    """Successful judgments of the run made on the episodes as they are now (stale ones are skipped)."""
    return current_of(await read_judgments(store, run_id), await run_heads(store, run_id))


async def failed_judgments(store: EventStore, run_id: str) -> list[Judgment]:
    """Failed judgments of the run made on the episodes as they are now: ``replay`` keeps them unless told to retry,
    so a hint to judge such a run says so."""
    failed = failed_now(await read_judgments(store, run_id), await run_heads(store, run_id))
    return [r.judgment for r in failed]


def rater(selector: str, records: list[JudgmentRecord], run_label: str, failed: Sequence[Judgment] = ()) -> Rater:
    """The rater ``selector`` names (``ID`` or ``ID@VERSION``): per episode its latest judgment, and all samples;
    ``failed`` (``failed_judgments``) is read when no judgment is current, for the hint.

    Judgments of one judge version on one episode with distinct config hashes are samples (``replay
    --samples``) when they come from one judge configuration besides the sample index; the latest is the
    rater's value.
    """
    chosen = _selected(selector, [r.judgment for r in records])
    if not chosen:
        judged = sorted({judge_label(r.judgment.judge_id, r.judgment.judge_version) for r in records})
        raise UserError(
            f"run {clip(run_label)} has no current judgment by {clip(selector)}; "
            f"judged by: {', '.join(judged) or _first_judge(selector, run_label, failed)}"
        )
    out = Rater(selector)
    latest_per_config: dict[tuple[str, str], Judgment] = {}
    for j in chosen:
        latest_per_config[(j.episode_stream, j.config_hash)] = j
    for (stream, _), j in latest_per_config.items():
        out.samples.setdefault(stream, []).append(items(j))
    for j in chosen:
        out.values[j.episode_stream] = items(j)
        out.tasks[j.episode_stream] = j.task_id
    return out


def _first_judge(selector: str, run_label: str, failed: Sequence[Judgment]) -> str:
    """What gives a run of finished episodes, judged by no one as they are now, the judgments ``selector`` names."""
    if selector.startswith(HUMAN_PREFIX):
        return "no one (import human labels with p2w-rt import-labels FILE)"
    judge_id = _named(selector, failed)[0]
    options = ["--judge", judge_id]
    if _selected(selector, failed):
        replay = command_line("replay", run_label, options=[*options, "--retry-failed"])
        return f"no one, {clip(selector)} failed (judge its episodes again with {replay})"
    if judge_id not in JUDGES.ids:
        return f"no one, and no installed judge is {clip(selector)} (installed: {', '.join(JUDGES.ids)})"
    return f"no one (judge its episodes with {command_line('replay', run_label, options=options)})"


def human_selectors(records: list[JudgmentRecord]) -> list[str]:
    """Every annotator who labelled this run, as selectors, in the order their labels arrived."""
    return list(dict.fromkeys(r.judgment.judge_id for r in records if r.judgment.judge_id.startswith(HUMAN_PREFIX)))


async def classifier_raters(store: EventStore, run_id: str, selectors: list[str], run_label: str) -> list[Rater]:
    """The raters ``classify:ID`` of ``selectors``, from the current classifications of the run; an unknown or
    absent classifier is a ``UserError`` naming the ones that classified the run."""
    wanted = [s.removeprefix(CLASSIFIER_PREFIX) for s in selectors if s.startswith(CLASSIFIER_PREFIX)]
    if not wanted:
        return []
    current = await current_classifications(store, run_id)
    out = []
    for classifier in wanted:
        chosen = [r.classification for (_, cid), r in current.items() if cid == classifier]
        if not chosen:
            have = sorted({CLASSIFIER_PREFIX + cid for _, cid in current})
            raise UserError(
                f"run {clip(run_label)} has no current classification by {clip(classifier)}; "
                f"classified by: {', '.join(have) or await _first_classifier(store, run_id, classifier, run_label)}"
            )
        r = Rater(CLASSIFIER_PREFIX + classifier)
        for c in chosen:
            found = {x.label for x in c.labels}
            r.values[c.episode_stream] = {f"point:{ERROR_POINT}{x}": float(x in found) for x in ALL_LABELS}
            r.tasks[c.episode_stream] = c.task_id
            r.samples[c.episode_stream] = [r.values[c.episode_stream]]
        out.append(r)
    return out


async def _first_classifier(store: EventStore, run_id: str, classifier: str, run_label: str) -> str:
    """What gives a run of finished episodes, classified by nothing as they are now, ``classifier``'s labels: the
    same ``classify``, which makes a failed classification again on every pass, so a failure needs no other flag."""
    classify = command_line("classify", run_label, options=("--classifier", classifier))
    failed = failed_now(await read_labels(store, run_id), await run_heads(store, run_id))
    if any(r.producer_id == classifier for r in failed):
        return f"nothing, {clip(classifier)} failed (classify its episodes again with {classify})"
    return f"nothing (classify its episodes with {classify})"


async def classifier_selectors(store: EventStore, run_id: str) -> list[str]:
    """``classify:ID`` for every classifier with a current classification of the run."""
    return sorted({CLASSIFIER_PREFIX + cid for _, cid in await current_classifications(store, run_id)})


def labels_errors(records: list[JudgmentRecord]) -> bool:
    """Whether any human judgment holds an error-label point (the viewer's form always does; a file may)."""
    return any(
        r.judgment.judge_id.startswith(HUMAN_PREFIX) and any(k.startswith(ERROR_POINT) for k in r.judgment.points)
        for r in records
    )
