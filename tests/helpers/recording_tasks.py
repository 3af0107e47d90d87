"""Tasks for the recording API tests: any object with a task's fields will do (``p2w_runtime.domain.TaskLike``)."""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.schemas import GroundTruth


@dataclass(frozen=True)
class Sketch:
    task_id: str
    intent: str
    start_url: str = "http://shop.example/"
    persona: str = "Lena_Fischer"
    query_set: str = "Lena_Fischer_A"
    level: int | None = None
    ground_truth: GroundTruth | None = None


TASKS = [Sketch("T1", "buy penne"), Sketch("T2", "buy rice")]
