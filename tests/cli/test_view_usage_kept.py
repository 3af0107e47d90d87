"""A finished run's usage scan kept beside the log (``p2w_cli/view/_usage_kept.py``): the first open after the run
changed builds its page from the kept scan and the usage events appended since, and shows what a scan of the whole
run shows."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic_core
import pytest
from click.testing import CliRunner

from p2w_cli.view import _usage_kept
from p2w_cli.view._first_page import MODEL as FIRST_PAGE
from p2w_cli.view._usage_kept import MODEL
from p2w_rt.cli import main
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.judge_replies import answer
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.view_app import fresh_open
from tests.helpers.view_support import drop_rows, log_end

pytestmark = pytest.mark.slow


@pytest.fixture
def db(demo_copy: Path) -> Path:
    return demo_copy


def kept_row(db: Path, run_id: str) -> tuple[int, dict[str, list[object]]]:
    """The kept scan's position and its folds by stream."""
    with raw_sqlite(db) as conn:
        ordinal, body = conn.execute(
            "SELECT ordinal, body FROM summaries WHERE kind = ? AND key = ?", (MODEL, run_id)
        ).fetchone()
    return ordinal, json.loads(body)["streams"]


def test_a_judging_pass_is_folded_into_the_kept_scan_as_a_whole_scan_would_fold_it(
    db: Path, scripted_llm: ScriptedLlm
) -> None:
    built, _ = fresh_open(db, "earlier")
    run_id = built.info.run_id
    position, streams = kept_row(db, run_id)
    assert built.usage is not None and built.usage.derived.calls == 0 and len(streams) == built.total

    scripted_llm.handle_with(lambda request: answer(request))
    judge = ["--db", str(db), "replay", "earlier", "--judge", "rubric-llm", "--base-url", scripted_llm.base_url]
    result = CliRunner().invoke(main, [*judge, "--api-key", "k"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr

    changed, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1, "the pass brought the run's stored first page up to date (_refresh.py)"
    assert changed.usage is not None and changed.usage.derived.calls == len(scripted_llm.chat_requests) > 0
    assert kept_row(db, run_id)[0] > position, "the scan read on from its kept position and was kept again"

    drop_rows(db, MODEL, FIRST_PAGE)
    whole, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0
    assert pydantic_core.to_json(changed) == pydantic_core.to_json(whole)


def test_the_first_open_after_a_change_starts_from_the_kept_scan(db: Path) -> None:
    """The kept folds are what the page shows: a count written into the row shows up (nothing read it again)."""
    built, _ = fresh_open(db, "earlier")
    run_id = built.info.run_id
    position, streams = kept_row(db, run_id)
    first = built.shown[0].ref.stream
    prompt_tokens = 7  # the flat tuple's prompt tokens
    marked = {**streams, first: [*streams[first][:prompt_tokens], 123_456_789, *streams[first][prompt_tokens + 1 :]]}
    with raw_sqlite(db) as conn:
        body = json.dumps(
            {
                "prices": json.loads(conn.execute("SELECT body FROM summaries WHERE kind = ?", (MODEL,)).fetchone()[0])[
                    "prices"
                ],
                "streams": marked,
            }
        )
        conn.execute("UPDATE summaries SET body = ? WHERE kind = ? AND key = ?", (body, MODEL, run_id))
    drop_rows(db, FIRST_PAGE)
    again, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and again.shown_usage[0] is not None
    assert again.shown_usage[0].usage.prompt_tokens == 123_456_789
    assert kept_row(db, run_id)[0] == position, "nothing was appended since: the row stays as it was"


def test_a_kept_scan_past_the_log_end_is_not_used(db: Path) -> None:
    """Events deleted behind the store's back (what ``verify``'s seals catch): the row may count what is gone."""
    built, _ = fresh_open(db, "earlier")
    run_id = built.info.run_id
    with raw_sqlite(db) as conn:
        conn.execute("UPDATE summaries SET ordinal = ordinal + 1000000 WHERE kind = ?", (MODEL,))
        body = conn.execute("SELECT body FROM summaries WHERE kind = ?", (MODEL,)).fetchone()[0]
        conn.execute(
            "UPDATE summaries SET body = ? WHERE kind = ?",
            (body.replace('"streams":{', '"streams":{"x/y":["t","",null,0,9,9,0,9,9,0.0,0,0,0.0,[]],', 1), MODEL),
        )
    drop_rows(db, FIRST_PAGE)
    again, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and pydantic_core.to_json(again.usage) == pydantic_core.to_json(built.usage)
    assert kept_row(db, run_id)[0] < 1_000_000


def test_a_kept_scan_that_no_longer_reads_is_not_used(db: Path) -> None:
    built, _ = fresh_open(db, "earlier")
    with raw_sqlite(db) as conn:
        conn.execute("UPDATE summaries SET body = substr(body, 1, length(body) / 2) WHERE kind = ?", (MODEL,))
    drop_rows(db, FIRST_PAGE)
    again, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0 and pydantic_core.to_json(again) == pydantic_core.to_json(built)
    assert kept_row(db, built.info.run_id)[1], "the scan of the whole run was kept in its place"


def test_a_scan_is_kept_at_the_log_end_once_other_runs_appended_enough(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run judged after ``earlier`` was opened appends nothing to ``earlier``'s usage. Below ``KEEP_GAP`` events the
    kept row stays (a viewer open while other runs record writes nothing each time); past it, the row is written at the
    log end, so the next fresh open does not read those events again (it read them on every open, kept at the run's
    last usage event: a run beside nine others of 1,000 episodes took 60 ms more, reading 200,000 events)."""
    built, _ = fresh_open(db, "earlier")
    position, _ = kept_row(db, built.info.run_id)
    result = CliRunner().invoke(main, ["--db", str(db), "replay", "later", "--judge", "rubric-rules", "--force"])
    assert result.exit_code == 0, result.stderr
    end = log_end(db)
    assert end > position

    drop_rows(db, FIRST_PAGE)
    unchanged, _ = fresh_open(db, "earlier")
    assert kept_row(db, built.info.run_id)[0] == position, "fewer than KEEP_GAP events of other runs: no write"

    monkeypatch.setattr(_usage_kept, "KEEP_GAP", end - position)
    drop_rows(db, FIRST_PAGE)
    moved, _ = fresh_open(db, "earlier")
    assert kept_row(db, built.info.run_id)[0] == end
    usages = {pydantic_core.to_json(page.usage) for page in (built, unchanged, moved)}
    assert len(usages) == 1
