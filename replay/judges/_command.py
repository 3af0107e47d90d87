"""What ``p2w-rt replay`` asks of the library: the options, and the judges they name."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from p2w_rt.replay.derived import PassOptions
from p2w_rt.replay.judges._base import Judge
from p2w_rt.replay.judges._family import make_judge


@dataclass(frozen=True)
class JudgeOptions(PassOptions):
    judges: tuple[str, ...]
    dry_run: bool = False
    retry_failed: bool = False
    samples: int = 1
    """LLM judges judge each episode this many times (self-consistency, ``p2w-rt agree``); rules judges once."""

    def make_judges(self) -> list[Judge[Any]]:
        """The judges named by ``--judge`` (each once, an LLM judge once per sample), configured; an unknown id
        is a ``UserError``."""
        settings = self.settings()
        judges: list[Judge[Any]] = []
        for judge_id in dict.fromkeys(self.judges):
            judge = make_judge(judge_id, settings)
            judges.append(judge)
            if judge.uses_llm:
                judges += [make_judge(judge_id, replace(settings, sample=n)) for n in range(1, self.samples)]
        return judges
