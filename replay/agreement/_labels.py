"""Human labels imported as judgments: judge id ``human:ANNOTATOR``, one event per (episode, annotator).

The file is CSV (header row) or JSON lines with the fields ``run``, ``task``, ``point`` (a rubric point,
checklist item, or a metric such as ``success``), ``label`` (a number, or yes/no, true/false, pass/fail)
and ``annotator``; optional ``max`` (the point's maximum, default 1). Every row is checked before anything
is written, so a bad file records nothing; importing the same labels again writes nothing new. Numbers must be
finite (JSON's ``NaN``/``Infinity`` included), text fields one printable line (an annotator name becomes the
judge id ``agree`` shows and selects, so it holds no ``@`` either, which separates a judge version there).
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from p2w_rt.replay.agreement._raters import HUMAN_PREFIX
from p2w_rt.replay.judges import JUDGMENT_SCORES, judgment_stream, read_scores
from p2w_rt.schemas import Judgment, NewEvent, content_hash
from p2w_runtime.data import BadValue, NestedTooDeep, parse_json
from p2w_runtime.domain import EpisodeRef, RunInfo, episodes_of, find_run
from p2w_runtime.errors import UserError, clip
from p2w_runtime.store import EventStore, append_with_seal, hold_claims

LABEL_VERSION = "labels"
METRICS = frozenset({"success", "p_web", "p_pref", "p_avg", "intent", "score"})
"""Labels of these names are episode-level figures (``metrics``); any other name is a point."""
WORDS = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "pass": 1.0, "fail": 0.0}
FIELDS = ("run", "task", "point", "label", "annotator")
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Label:
    where: str
    run: str
    task: str
    point: str
    value: float
    top: float
    annotator: str


@dataclass(frozen=True, slots=True)
class ImportSummary:
    labels: int
    written: int
    already: int


def _rows(path: Path) -> list[tuple[str, dict[str, object]]]:
    if not path.is_file():  # a FIFO: opening it would wait for a writer forever
        raise UserError(f"{path}: not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise UserError(f"{path}: {path.stat().st_size} bytes is more than a label file may hold ({MAX_FILE_BYTES})")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's CSV starts with a byte order mark
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read labels ({exc})") from None
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        rows: list[tuple[str, dict[str, object]]] = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = parse_json(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{n}: not JSON ({exc.msg})") from None
            except BadValue as exc:
                raise UserError(f"{path}:{n}: field {exc.field!r}: {exc.reason}") from None
            except NestedTooDeep as exc:
                raise UserError(f"{path}:{n}: {exc}") from None
            if not isinstance(row, dict):
                raise UserError(f"{path}:{n}: expected an object with {', '.join(FIELDS)}")
            rows.append((f"{path}:{n}", row))
        return rows
    reader = csv.DictReader(io.StringIO(text))
    try:  # csv.Error: a field over csv.field_size_limit() characters, or a malformed line
        missing = [f for f in FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"{path}: header lacks column {missing[0]!r} (needs {', '.join(FIELDS)})")
        return [(f"{path}:{n}", dict(row)) for n, row in enumerate(reader, 2)]
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.line_num + 1}: not CSV ({exc})") from None  # the line it failed in


def _number(where: str, name: str, raw: object) -> float:
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, int | float):
        try:
            value = float(raw)
        except OverflowError:  # a JSON integer of 309 digits or more
            raise UserError(f"{where}: field {name!r}: {clip(raw)} is not a finite number") from None
    elif (text := str(raw).strip().lower()) in WORDS:
        return WORDS[text]
    else:
        try:
            value = float(text)
        except (ValueError, OverflowError):
            raise UserError(f"{where}: field {name!r}: {clip(raw)!r} is not a number or yes/no") from None
    if not math.isfinite(value):
        raise UserError(f"{where}: field {name!r}: {clip(raw)!r} is not a finite number")
    return value


def _text(where: str, name: str, raw: object) -> str:
    """A text field as one printable line: no control or format characters (newline, escape, bidi marks)."""
    text = str(raw).strip()
    odd = next((ch for ch in text if unicodedata.category(ch)[0] == "C"), None)
    if odd is not None:
        raise UserError(
            f"{where}: field {name!r}: {clip(text)!r} holds the control character U+{ord(odd):04X}; "
            "it must be one printable line"
        )
    if name == "annotator" and "@" in text:
        raise UserError(f"{where}: field 'annotator': {clip(text)!r} holds '@', which agree reads as NAME@VERSION")
    return text


def label_of(where: str, row: Mapping[str, object]) -> Label:
    """One label checked: each field present and non-empty, the label numeric and within ``max``. A row of a
    file and a field of the viewer's label form (``p2w-rt view --annotator``) go through here alike."""
    for name in FIELDS:
        if row.get(name) is None or str(row[name]) == "":
            raise UserError(f"{where}: field {name!r} is missing or empty")
        if str(row[name]).strip() == "":
            raise UserError(f"{where}: field {name!r} is only whitespace ({clip(row[name])!r})")
    text = {name: _text(where, name, row[name]) for name in ("run", "task", "point", "annotator")}
    value = _number(where, "label", row["label"])
    top = _number(where, "max", row["max"]) if row.get("max") not in (None, "") else 1.0
    if top <= 0 or not 0 <= value <= top:
        raise UserError(f"{where}: field 'label': {value} is outside 0..{top}")
    return Label(where, text["run"], text["task"], text["point"], value, top, text["annotator"])


def check_annotator(where: str, name: str) -> str:
    """An annotator name as a label file may give it (one printable line, no ``@``), or ``UserError``."""
    if not name.strip():
        raise UserError(f"{where}: the annotator name is empty")
    return _text(where, "annotator", name)


def parse_labels(path: Path) -> list[Label]:
    """Every label of the file, checked (``label_of``)."""
    labels = [label_of(where, row) for where, row in _rows(path)]
    if not labels:
        raise UserError(f"{path}: no labels")
    return labels


def _judgment(episode: EpisodeRef, annotator: str, labels: list[Label]) -> Judgment:
    points = {lb.point: lb.value for lb in labels if lb.point not in METRICS}
    return Judgment(
        episode_stream=episode.stream,
        task_id=episode.task_id,
        trajectory_hash=episode.hash,
        judge_id=f"{HUMAN_PREFIX}{annotator}",
        judge_version=LABEL_VERSION,
        config_hash=content_hash([[lb.point, lb.value, lb.top] for lb in labels]),
        points=points,
        max_points={lb.point: lb.top for lb in labels if lb.point not in METRICS},
        metrics={lb.point: lb.value for lb in labels if lb.point in METRICS},
    )


async def import_labels(store: EventStore, path: Path) -> ImportSummary:
    """The labels of the file at ``path``, recorded (``record_labels``)."""
    return await record_labels(store, parse_labels(path))


async def record_labels(store: EventStore, labels: Sequence[Label]) -> ImportSummary:
    """Check every label against the store (run, counted episode, no contradicting duplicate), then append one
    judgment per (episode, annotator); labels already recorded the same way write nothing. The one writing path
    of human labels: ``import-labels`` and the viewer's label form both end here."""
    by_run: dict[str, dict[tuple[str, str], list[Label]]] = defaultdict(lambda: defaultdict(list))
    episodes: dict[str, dict[str, EpisodeRef]] = {}
    found: dict[str, RunInfo] = {}
    for lb in labels:
        if lb.run not in found:  # one lookup per run named, not per label
            try:
                found[lb.run] = await find_run(store, lb.run)
            except UserError as exc:
                raise UserError(f"{lb.where}: field 'run': {exc}") from None
        info = found[lb.run]
        if info.run_id not in episodes:  # the episodes of the tasks labelled, not the run's every one decoded
            named = await episodes_of(store, info.run_id, tasks={label.task for label in labels})
            episodes[info.run_id] = {e.task_id: e for e in named}
        if lb.task not in episodes[info.run_id]:
            raise UserError(f"{lb.where}: field 'task': run {clip(lb.run)} has no counted episode {clip(lb.task)!r}")
        group = by_run[info.run_id][(lb.task, lb.annotator)]
        same = [g for g in group if g.point == lb.point]
        if same and same[0].value != lb.value:
            raise UserError(f"{lb.where}: field 'label': {lb.annotator} labelled {lb.point} twice, differently")
        if not same:
            group.append(lb)
    written = already = 0
    for run_id in by_run:
        await JUDGMENT_SCORES.check_free(store, run_id)
    for run_id, groups in by_run.items():
        async with hold_claims(store, [f"labels/{run_id}"]):
            seen = {  # the keys only: a run of 10,000 judged episodes is not decoded whole for each label posted
                (r.judgment.trajectory_hash, r.judgment.judge_id, r.judgment.config_hash)
                for r in await read_scores(store, run_id)
            }
            events = []
            for (task, annotator), group in groups.items():
                j = _judgment(episodes[run_id][task], annotator, group)
                if (j.trajectory_hash, j.judge_id, j.config_hash) in seen:
                    already += 1
                    continue
                events.append(NewEvent(stream=judgment_stream(run_id), payload=j))
            if events:
                await append_with_seal(store, run_id, judgment_stream(run_id), events)
                written += len(events)
    return ImportSummary(len(labels), written, already)
