"""The replay test modules' shared fixtures: the judged example runs the OTel export modules export, and their
export. Module-scoped, so a module gets its own copy; the runs themselves are imported and judged once per session
(``judged_examples``)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.helpers.otel_support import judged_examples, ok
from tests.helpers.raw_sqlite import raw_sqlite


@pytest.fixture(scope="module")
def otel_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example runs ``earlier`` (judged with rubric-rules, classified) and ``later``: the module's own copy, which
    its commands may write to."""
    copy = tmp_path_factory.mktemp("otel") / "runs.db"
    made = judged_examples(tmp_path_factory.getbasetemp())
    with raw_sqlite(made) as source, closing(sqlite3.connect(copy)) as target:
        source.backup(target)
    return copy


@pytest.fixture(scope="module")
def otel_jsonl(otel_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``earlier`` exported as OTLP JSON, a line per episode, in a folder of the module's own."""
    out = tmp_path_factory.mktemp("traces") / "earlier.jsonl"
    said = ok(otel_db, "export", "earlier", "--format", "otel", "-o", str(out))
    assert "24 traces" in said and str(out) in said
    return out
