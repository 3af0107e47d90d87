"""The counts a pass prints say what it did: a failed result tried again (``replay --retry-failed``, every pass of
``classify``) is counted judged or classified, not cached, even when it failed the same way and nothing was appended,
and each ``--json`` row's ``cached`` agrees with the closing line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.judges import read_judgments
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.chinos_runs import TRUTH, build_runs


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_runs(tmp_path / "p2w.db", (("no truth", None, True), ("with truth", TRUTH, True)))


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def judgments(db: Path, label: str) -> int:
    """How many judgments the run's stream holds."""

    async def count() -> int:
        async with open_store(db) as store:
            return len(await read_judgments(store, (await find_run(store, label)).run_id))

    return asyncio.run(count())


def test_a_judgment_retried_that_fails_the_same_way_is_judged_not_cached(db: Path) -> None:
    judge = ("replay", "no truth", "--judge", "rubric-rules")
    code, _, err = invoke(db, *judge)
    assert code == 1 and "no truth: judged 1, cached 0, failed 1" in err, err
    code, out, err = invoke(db, *judge, "--json")
    assert code == 1 and "no truth: judged 0, cached 1, failed 1" in err, err
    assert [row["cached"] for row in rows(out)] == [True]
    before = judgments(db, "no truth")

    code, out, err = invoke(db, *judge, "--retry-failed")
    assert code == 1 and "no truth: judged 1, cached 0, failed 1" in err, err
    assert "cached failed" not in out and "failed  T1" in out
    code, out, err = invoke(db, *judge, "--retry-failed", "--json")
    assert code == 1 and "no truth: judged 1, cached 0, failed 1" in err, err
    ((row,),) = [rows(out)]
    assert (row["cached"], row["status"]) == (False, "failed")
    assert judgments(db, "no truth") == before, "the same failure again is not appended"


def test_a_classification_failed_again_on_the_next_pass_is_classified_not_cached(
    db: Path, scripted_llm: ScriptedLlm
) -> None:
    scripted_llm.handle_with(lambda _: Text('{"labels": [{"label": "made_up_error"}]}'))
    classify = ("classify", "with truth", "--classifier", "llm", "--base-url", scripted_llm.base_url, "--api-key", "k")
    for _ in range(2):  # classify tries a failure again on every pass
        code, out, err = invoke(db, *classify, "--json")
        assert code == 1 and "with truth: classified 1, cached 0, failed 1" in err, err
        ((row,),) = [rows(out)]
        assert (row["cached"], row["status"]) == (False, "failed")
