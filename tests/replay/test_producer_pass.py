"""The one pass every producer family runs through (``replay.derived.ProducerPass``): cached episodes are not
read, and one cause failing many episodes is counted under one error."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from p2w_rt.replay.classify import CLASSIFIERS, RulesClassifier, classification_stream
from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, JudgeOutcome, JudgeSummary, judgment_stream, make_judge
from p2w_runtime.store import open_store
from tests.helpers.builders import make_run

TASKS = ("Alex_Garcia_A1", "Alex_Garcia_B1", "Alex_Garcia_C1")


def reads_of(store: Any) -> list[str]:
    """Every stream the store is asked to read from now on (the real read, counted on the way)."""
    streams: list[str] = []
    read, read_many, read_chained = store.read_stream, store.read_streams, store.read_chained

    def counted(stream: str, *args: Any, **kwargs: Any) -> Any:
        streams.append(stream)
        return read(stream, *args, **kwargs)

    def counted_many(names: Sequence[str]) -> Any:
        streams.extend(names)
        return read_many(names)

    def counted_chained(names: Sequence[str]) -> Any:
        streams.extend(names)
        return read_chained(names)

    store.read_stream = counted
    store.read_streams = counted_many
    store.read_chained = counted_chained
    return streams


async def test_a_cached_classification_pass_reads_no_episode_events(tmp_path: Path) -> None:
    async with open_store(tmp_path / "c.db") as store:
        run_id = await make_run(store, TASKS)
        first = await run_pass(CLASSIFIERS, store, run_id, [RulesClassifier(PassSettings())])
        assert (first.classified, first.cached) == (3, 0)
        streams = reads_of(store)
        again = await run_pass(CLASSIFIERS, store, run_id, [RulesClassifier(PassSettings())])
        assert (again.classified, again.cached) == (0, 3)
        assert streams == [classification_stream(run_id)], "only the cache was read, no episode stream"
        forced = await run_pass(CLASSIFIERS, store, run_id, [RulesClassifier(PassSettings())], force=True)
        assert forced.classified == 3 and {f"{run_id}/{t}" for t in TASKS} <= set(streams)


async def test_one_cause_failing_every_episode_is_one_error_with_a_count(tmp_path: Path) -> None:
    judge = make_judge("rubric-llm", PassSettings())
    async with open_store(tmp_path / "j.db") as store:
        run_id = await make_run(store, TASKS)
        live = JudgeSummary()
        shown: list[JudgeOutcome] = []

        def on_outcome(outcome: JudgeOutcome) -> None:  # as the CLI shows results while they land
            live.add(outcome)
            if live.first_of_its_kind(outcome):
                shown.append(outcome)

        # no LLM configured: every episode fails the same way
        summary = await run_pass(JUDGES, store, run_id, [judge], on_outcome=on_outcome)
        assert summary.failed == 3 and len(summary.failures) == 1
        ((error, count),) = summary.failures.items()
        assert count == 3 and "needs an LLM, and none is configured" in error
        assert len(shown) == 1, "the CLI shows the first failure of a kind, then the count"
        written = [e async for e in store.read_stream(judgment_stream(run_id)) if e.type == "judgment"]
        again = await run_pass(JUDGES, store, run_id, [judge], retry_failed=True)
        after = [e async for e in store.read_stream(judgment_stream(run_id)) if e.type == "judgment"]
        assert again.failures[error] == 3 and len(after) == len(written), "the same failure again is not re-appended"


def test_the_cli_reads_ids_defaults_and_help_from_the_registry() -> None:
    from click.testing import CliRunner

    from p2w_rt.cli import main
    from p2w_rt.replay.derived import family

    for command, kind in (("replay", "judge"), ("classify", "classifier")):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0, result.output
        text = "".join(result.output.split())  # --help wraps lines, at hyphens too
        for cls in family(kind).producers:
            assert "".join(f"{cls.id}: {cls.description}".split()) in text, (command, cls.id)
    assert "[default:rules]" in "".join(CliRunner().invoke(main, ["classify", "--help"]).output.split())
