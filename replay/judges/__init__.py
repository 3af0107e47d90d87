"""Judges: the ``judge`` family of derived results (judgments, their stream, estimates, the ``replay`` command's
options) and the base every judge subclasses; each judge an id and a version, chosen with ``--judge ID``. The judges
themselves are the benchmarks' plugins (``replay.persona2web``, ``replay.webarena``, ``replay.agenticshop``), which
stand on this package and never the other way round; see docs/design/judges.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.judges._base import (
        CallEstimate,
        Judge,
        JudgeContext,
        JudgeError,
        LlmConfig,
        Scorecard,
        llm_fields,
        template_hash,
    )
    from p2w_rt.replay.judges._command import JudgeOptions, JudgeReport, judge_runs
    from p2w_rt.replay.judges._estimate import JudgeEstimate, estimate_replay
    from p2w_rt.replay.judges._family import JUDGES, JudgeOutcome, JudgeSummary, make_judge
    from p2w_rt.replay.judges._records import (
        JudgmentRecord,
        current_judgments,
        episode_judgments,
        judgment_stream,
        read_judgments,
    )
    from p2w_rt.replay.judges._scores import (
        JUDGMENT_SCORES,
        JudgmentScores,
        ScoresRecord,
        current_scores,
        read_scores,
    )
    from p2w_rt.replay.judges._selector import named_judge

__all__ = [
    "JUDGES",
    "JUDGMENT_SCORES",
    "CallEstimate",
    "Judge",
    "JudgeContext",
    "JudgeError",
    "JudgeEstimate",
    "JudgeOptions",
    "JudgeOutcome",
    "JudgeReport",
    "JudgeSummary",
    "JudgmentRecord",
    "JudgmentScores",
    "LlmConfig",
    "Scorecard",
    "ScoresRecord",
    "current_judgments",
    "current_scores",
    "episode_judgments",
    "estimate_replay",
    "judge_runs",
    "judgment_stream",
    "llm_fields",
    "make_judge",
    "named_judge",
    "read_judgments",
    "read_scores",
    "template_hash",
]

_MODULES = {
    "CallEstimate": "_base",
    "Judge": "_base",
    "JudgeContext": "_base",
    "JudgeError": "_base",
    "LlmConfig": "_base",
    "Scorecard": "_base",
    "llm_fields": "_base",
    "template_hash": "_base",
    "JudgeOptions": "_command",
    "JudgeReport": "_command",
    "judge_runs": "_command",
    "JudgeEstimate": "_estimate",
    "estimate_replay": "_estimate",
    "JUDGES": "_family",
    "JudgeOutcome": "_family",
    "JudgeSummary": "_family",
    "make_judge": "_family",
    "JudgmentRecord": "_records",
    "current_judgments": "_records",
    "episode_judgments": "_records",
    "judgment_stream": "_records",
    "read_judgments": "_records",
    "JUDGMENT_SCORES": "_scores",
    "JudgmentScores": "_scores",
    "ScoresRecord": "_scores",
    "current_scores": "_scores",
    "read_scores": "_scores",
    "named_judge": "_selector",
}
"""Where each exported name lives; they load on first use (``metrics`` reads judgments and loads no judge)."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
