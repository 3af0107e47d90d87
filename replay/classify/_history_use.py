"""History retrieval and utilization failures, against the task's ground truth.

The values are the rubric's (``replay.persona2web.rubric_targets``): the expected website, each
preference, and the location on location-aware sites. Retrieval failure: a value the query does
not state never appears in a retrieved entry or memory answer (a value the query states needs no
history). Utilization failure: a value was retrieved, and nothing the agent did after that
retrieval (action argument, URL, reasoning, answer; for the website: a page on it) applies it.
Runs of the ``no-history`` scheme that never asked the history are not judged on either: the
failure is the scheme's design, not an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p2w_rt.replay.classify._labels import HISTORY_RETRIEVAL_FAILURE, HISTORY_UTILIZATION_FAILURE
from p2w_rt.replay.classify._texts import Text, applied_texts, event_order, memory_texts, page_urls
from p2w_rt.replay.judges import JudgeError
from p2w_rt.replay.matching import compile_value, find_value, mentions_site, on_site
from p2w_rt.replay.persona2web import SiteLists, reasoned_steps, rubric_targets
from p2w_rt.schemas import ErrorLabel, Evidence
from p2w_runtime.domain.trajectory import Trajectory

Finder = Callable[[str], str | None]
"""Where a target appears in a text: the matched snippet, or None."""


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    in_text: Finder
    hosts: tuple[str, ...] = ()
    """Set for the website: it is applied by being on it, a value by appearing in what the agent did."""
    applied_in: Finder | None = None
    """Where the value counts as applied (a number within its limit too, as ``rubric-rules`` reads it)."""


def _value_finder(values: Sequence[str], *, bounded: bool = False) -> Finder:
    patterns = [compile_value(v) for v in values]

    def find(text: str) -> str | None:
        for pattern in patterns:
            match = find_value(pattern, text, bounded=bounded)
            if match is not None:
                return match.snippet
        return None

    return find


def _site_finder(hosts: Sequence[str]) -> Finder:
    def find(text: str) -> str | None:
        mention = mentions_site(text, hosts)
        return mention.snippet if mention else None

    return find


def targets(t: Trajectory, settings: SiteLists) -> list[Target] | None:
    """The ground-truth values of the episode, or None when it has no ground truth."""
    try:
        rubric = rubric_targets(t, settings)
    except JudgeError:
        return None
    found = [Target(f"website {' / '.join(rubric.websites)}", _site_finder(rubric.hosts), rubric.hosts)]
    found += [
        Target(f"preference {value!r}", _value_finder([value]), applied_in=_value_finder([value], bounded=True))
        for value in rubric.preferences
    ]
    if rubric.location is not None:
        values = rubric.location_values
        found.append(
            Target(
                f"location {rubric.location.raw!r}",
                _value_finder(values),
                applied_in=_value_finder(values, bounded=True),
            )
        )
    return found


def _values(t: Trajectory, settings: SiteLists) -> tuple[str, ...]:
    return rubric_targets(t, settings).values


def _first(target: Target, texts: Sequence[Text]) -> tuple[Text, str] | None:
    for text in texts:
        snippet = target.in_text(text.text)
        if snippet is not None:
            return text, snippet
    return None


def history_use(t: Trajectory, settings: SiteLists) -> list[ErrorLabel]:
    """Zero, one or both of the retrieval and utilization failure labels."""
    wanted = targets(t, settings)
    if wanted is None or (t.scheme == "no-history" and not t.history):
        return []
    order = event_order(t)
    memory = memory_texts(t, order)
    applied = applied_texts(t, order, reasoned_steps(t, _values(t, settings)))
    pages = page_urls(t, order)
    missing: list[Target] = []
    unused: list[tuple[Target, Text, str]] = []
    for target in wanted:
        retrieved = _first(target, memory)
        if retrieved is None:
            if target.in_text(t.query) is None:
                missing.append(target)
            continue
        where, snippet = retrieved
        if target.hosts:
            used = any(page.order > where.order and on_site(page.text, target.hosts) for page in pages)
        else:
            applied_in = target.applied_in or target.in_text
            used = any(a.order > where.order and applied_in(a.text) is not None for a in applied)
        if not used:
            unused.append((target, where, snippet))
    labels: list[ErrorLabel] = []
    if missing:
        searched = [a.query_event_id or a.retrievals[0].event_id for a in t.history if a.query_event_id or a.retrievals]
        names = ", ".join(target.name for target in missing)
        labels.append(
            ErrorLabel(
                label=HISTORY_RETRIEVAL_FAILURE,
                explanation=(
                    f"{names} never appear(s) in {len(memory)} retrieved entries / memory answers "
                    f"of {len(t.history)} history queries, and the query does not state it"
                ),
                evidence=Evidence(event_ids=searched, text=names, note="searched retrieved entries and memory answers"),
            )
        )
    if unused:
        names = ", ".join(target.name for target, _, _ in unused)
        labels.append(
            ErrorLabel(
                label=HISTORY_UTILIZATION_FAILURE,
                explanation=f"{names} retrieved, but no later action, URL or reasoning applies it",
                evidence=Evidence(
                    event_ids=list(dict.fromkeys(where.event_id for _, where, _ in unused)),
                    text=" | ".join(f"{snippet} ({where.where})" for _, where, snippet in unused),
                    note=f"searched {len(applied)} action arguments, URLs, reasoning texts and the answer",
                ),
            )
        )
    return labels
