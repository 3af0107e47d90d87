"""Human labels from the episode page (``p2w-rt view --annotator NAME``): the form's fields become the labels a
label file would hold (``run, task, point, label, annotator``), checked by ``replay.agreement.label_of`` and
recorded by ``record_labels``, the one path ``p2w-rt import-labels`` writes through, so ``p2w-rt agree RUN --judge
... --human`` reads them like imported ones: one ``human:NAME`` judgment per episode, the same labels twice
writing nothing.

The scores are the verdict (``success``: did the agent do the task, 1 / 0) and the rubric's figures (Persona2Web,
appendix E) as shares: P_web (website retrieval and use, 0 /
0.5 / 1), P_pref (preferences and location, 0..1) and Intent (0 / 0.5 / 1, the rubric's 0 / 5 / 10). Each error
label of the classifiers is a point ``error.LABEL``, 1 when ticked, 0 when not: the form says which errors the
person saw, and which they looked for and did not see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from p2w_cli.view._problems import BadRequest
from p2w_rt.replay.agreement import Label, label_of
from p2w_rt.replay.classify import ALL_LABELS
from p2w_runtime.errors import UserError

SCORES: tuple[tuple[str, str, tuple[float, ...]], ...] = (
    ("success", "Success", (0.0, 1.0)),
    ("p_web", "P_web", (0.0, 0.5, 1.0)),
    ("p_pref", "P_pref", ()),
    ("intent", "Intent", (0.0, 0.5, 1.0)),
)
"""(label name, title, the values a select offers; empty: a number from 0 to 1)."""
ERROR_PREFIX = "error."
FORM_BYTES = 16 * 1024
"""A label form is a few hundred bytes; a larger body is refused before it is parsed."""
FIELDS = frozenset({"token", "page", "error", *(name for name, _, _ in SCORES)})


@dataclass(frozen=True, slots=True)
class Annotating:
    """What the episode page's label form needs: who labels, and this server's form token."""

    annotator: str
    token: str
    scores: tuple[tuple[str, str, tuple[float, ...]], ...] = SCORES
    errors: tuple[str, ...] = field(default=ALL_LABELS)


def parse_form(body: bytes) -> dict[str, list[str]]:
    """An ``application/x-www-form-urlencoded`` body; anything else, or too much, is a 400 naming why."""
    if len(body) > FORM_BYTES:
        raise BadRequest(
            "Bad label form", f"the form is {len(body)} bytes, more than a label form holds ({FORM_BYTES})"
        )
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body), max_num_fields=64)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest("Bad label form", f"the form is not URL-encoded UTF-8 ({type(exc).__name__})") from None
    unknown = sorted(set(form) - FIELDS)
    if unknown:
        raise BadRequest("Bad label form", f"form field {unknown[0]!r} is not a field of the label form")
    return form


def labels_from_form(form: Mapping[str, Sequence[str]], run_id: str, task_id: str, annotator: str) -> list[Label]:
    """The labels the form holds, each checked as a label file's row is; a bad one is a 400 naming its field."""
    rows: list[tuple[str, str, str]] = []
    for name, _, _ in SCORES:
        given = form.get(name, [])
        if len(given) > 1:
            raise BadRequest("Bad label", f"form field {name!r} is given {len(given)} times")
        if given and given[0].strip() != "":
            rows.append((f"form field {name!r}", name, given[0]))
    ticked = list(form.get("error", []))
    odd = next((x for x in ticked if x not in ALL_LABELS), None)
    if odd is not None:
        raise BadRequest("Bad label", f"form field 'error': {odd[:60]!r} is not an error label")
    rows += [(f"form field 'error' ({x})", ERROR_PREFIX + x, "1" if x in ticked else "0") for x in ALL_LABELS]
    labels = []
    for where, point, value in rows:
        row = {"run": run_id, "task": task_id, "point": point, "label": value, "annotator": annotator}
        try:
            labels.append(label_of(where, row))
        except UserError as exc:
            raise BadRequest("Bad label", str(exc)) from None
    return labels
