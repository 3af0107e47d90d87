"""One rule for "is this derived result current?", for every kind (judgments, classifications) and every reader."""

from __future__ import annotations

from p2w_rt.replay.classify import ClassificationRecord
from p2w_rt.replay.derived import current_of, latest_current
from p2w_rt.replay.judges import JudgmentRecord
from p2w_rt.schemas import ErrorClassified, Judgment

HEADS = {"run/ep-a": "hash-a2", "run/ep-b": "hash-b1"}


def _judgment(n: int, stream: str, trajectory: str, judge: str = "rules", status: str = "ok") -> JudgmentRecord:
    payload = Judgment(
        episode_stream=stream,
        task_id=stream[-1],
        trajectory_hash=trajectory,
        judge_id=judge,
        judge_version="1",
        config_hash=f"c{n}",
        status="ok" if status == "ok" else "failed",
    )
    return JudgmentRecord(f"e{n}", f"t{n}", payload)


def test_stale_failed_and_unknown_results_are_not_current() -> None:
    records = [
        _judgment(1, "run/ep-a", "hash-a1"),  # made before the episode grew: stale
        _judgment(2, "run/ep-a", "hash-a2"),
        _judgment(3, "run/ep-b", "hash-b1", status="failed"),
        _judgment(4, "run/ep-c", "hash-c1"),  # an episode not in the run's heads
        _judgment(5, "run/ep-a", "hash-a2"),  # a second sample of the same episode
    ]
    assert [r.event_id for r in current_of(records, HEADS)] == ["e2", "e5"]


def test_latest_current_is_per_episode_and_producer() -> None:
    records = [
        _judgment(1, "run/ep-a", "hash-a2"),
        _judgment(2, "run/ep-a", "hash-a2", judge="llm"),
        _judgment(3, "run/ep-a", "hash-a2"),
        _judgment(4, "run/ep-b", "hash-b1"),
    ]
    latest = latest_current(records, HEADS)
    assert {key: r.event_id for key, r in latest.items()} == {
        ("run/ep-a", "rules"): "e3",
        ("run/ep-a", "llm"): "e2",
        ("run/ep-b", "rules"): "e4",
    }


def test_classifications_follow_the_same_rule() -> None:
    def classified(n: int, trajectory: str) -> ClassificationRecord:
        payload = ErrorClassified(
            episode_stream="run/ep-b",
            task_id="b",
            trajectory_hash=trajectory,
            classifier_id="errors",
            classifier_version="1",
            config_hash="c",
            labels=[],
        )
        return ClassificationRecord(f"e{n}", f"t{n}", payload)

    latest = latest_current([classified(1, "hash-b1"), classified(2, "hash-b0")], HEADS)
    assert {key: r.event_id for key, r in latest.items()} == {("run/ep-b", "errors"): "e1"}
