"""Which version of a judge a table scores with, so that two versions of one judge are never averaged as one.

A judgment counts when it judged the episode as it is now (``replay.derived.current_of``) and was made by the
version the table uses: the newest version of that judge among the runs' current judgments. Tables read recorded
judgments, so they take the version from them rather than from the judge's code, which ``metrics`` does not load
(docs/design/startup.md); ``diff`` and ``stats``, which judge with rules in memory what has no judgment, use the
installed judge's version whenever they must judge. The version is named in every table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from p2w_rt.replay.derived import current_of, run_heads
from p2w_rt.replay.judges import ScoresRecord, read_scores
from p2w_runtime.domain import episodes_of
from p2w_runtime.store import EventStore

Versions = dict[tuple[str, str], dict[str, ScoresRecord]]
"""(episode stream, judge id) -> judge version -> the latest judgment of the episode as it is now by that version."""


async def versioned_scores(store: EventStore, run_id: str, judge_id: str | None = None) -> Versions:
    """The run's current judgments (by ``judge_id`` only, if given), each version of a judge apart."""
    return versions_of(current_of(await read_scores(store, run_id), await run_heads(store, run_id)), judge_id)


def versions_of(current: Iterable[ScoresRecord], judge_id: str | None = None) -> Versions:
    """``current`` (judgments of episodes as they are now, oldest first) by ``judge_id`` only, if given, each
    version of a judge apart: for a reader that already holds them (the viewer, from its episode rows' hashes)."""
    out: Versions = {}
    for record in current:
        if judge_id is None or record.producer_id == judge_id:
            versions = out.setdefault((record.payload.episode_stream, record.producer_id), {})
            versions[record.judgment.judge_version] = record
    return out


_RUNS = re.compile(r"[0-9]+|[^0-9.+-]+")
"""A version's pieces: runs of ASCII digits and runs of anything else, split at ``.``, ``-`` and ``+``."""

Order = tuple[tuple[tuple[int, int, str], ...], tuple[int, tuple[tuple[int, int, str], ...]], str]


def _order(version: str) -> Order:
    """Versions in natural order, one order on every machine: "10" after "9" and "2a", "1.10" after "1.9", a
    pre-release after its ``-`` before its release ("2-beta" before "2"), "" before any; versions alike in all
    that ("1", "01") by their text, so the newest never depends on which one a set gives first. Numbers are
    compared by their digits, never converted: a version of thousands of digits or of "²" is only text."""
    release, dash, pre = version.partition("-")
    return _pieces(release), (0, _pieces(pre)) if dash else (1, ()), version


def _pieces(text: str) -> tuple[tuple[int, int, str], ...]:
    """A number as (0, its count of digits, its digits), leading zeros left out; other text as (1, 0, text)."""
    numbers = ((run, run.lstrip("0")) for run in _RUNS.findall(text))
    return tuple((0, len(digits), digits) if "0" <= run[0] <= "9" else (1, 0, run) for run, digits in numbers)


def newest(versions: Iterable[str]) -> str | None:
    return max(versions, key=_order, default=None)


def newest_by_judge(runs: Iterable[Versions]) -> dict[str, str]:
    """Each judge's newest version in the runs' current judgments: the one their tables use."""
    seen: dict[str, set[str]] = {}
    for judged in runs:
        for (_, judge), versions in judged.items():
            seen.setdefault(judge, set()).update(versions)
    return {judge: v for judge, versions in seen.items() if (v := newest(versions)) is not None}


def judge_label(judge: str, version: str | None) -> str:
    """A judge as tables name it, ``rubric-rules@5`` (the ``ID@VERSION`` that ``p2w-rt agree --judge`` takes)."""
    return judge if version is None else f"{judge}@{version}"


def other_versions(versions: Mapping[str, ScoresRecord], version: str | None) -> tuple[str, ...]:
    """The versions but ``version`` that judged an episode, when ``version`` did not: why it counts as unjudged."""
    return () if version in versions else tuple(sorted(versions, key=_order))


@dataclass(frozen=True, slots=True)
class Compared:
    """A run's current judgments by one judge, and the version a comparison scores each run with."""

    version: str
    judged: Versions

    def record(self, stream: str, judge_id: str) -> ScoresRecord | None:
        return self.judged.get((stream, judge_id), {}).get(self.version)


async def compared_scores(runs: Sequence[tuple[EventStore, str]], judge_id: str) -> list[Compared]:
    """The judgments by ``judge_id`` of each of ``runs`` (store, run id) at one version: the newest recorded when it
    judged every episode of every run, so the judge's code is not loaded; else the installed judge's, which judges
    the others (``diff``'s rules judge, in memory)."""
    judged = [await versioned_scores(store, run_id, judge_id) for store, run_id in runs]
    version = newest_by_judge(judged).get(judge_id)
    for (store, run_id), scores in zip(runs, judged, strict=True):
        if version is None:
            break
        if any(version not in scores.get((ref.stream, judge_id), {}) for ref in await episodes_of(store, run_id)):
            version = None
    if version is None:
        from p2w_rt.replay.derived import family  # the registry and the judge's code, only when it must judge

        version = family("judge").get(judge_id).version
    return [Compared(version, scores) for scores in judged]
