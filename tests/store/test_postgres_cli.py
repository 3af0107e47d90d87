"""Every reading and judging command on a PostgreSQL store, selected by --db or P2W_DB, and diff across backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.testing.postgres import PostgresServer


def p2w(db: str | Path | None, *args: str, env: dict[str, str] | None = None):
    prefix = [] if db is None else ["--db", str(db)]
    return CliRunner().invoke(main, [*prefix, *args], env=env, catch_exceptions=False)


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def test_commands_work_on_postgres_and_diff_compares_across_backends(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.fresh_database()
    examples = ["import-trajectories", "--format", "p2w-agentoccam", "--examples"]
    ok(p2w(None, *examples, "--label", "pg", env={"P2W_DB": url}))
    (run,) = [json.loads(line) for line in ok(p2w(url, "runs", "--json")).splitlines()]
    assert run["label"] == "pg" and run["episodes"] == 3
    shown = [json.loads(line)["task_id"] for line in ok(p2w(url, "show", "pg", "--json")).splitlines()]
    assert shown == ["Jordan_Park_A1", "Mina_Okafor_A2", "Theo_Lindqvist_A1"]
    assert "judged 3" in ok(p2w(url, "replay", "pg", "--judge", "rubric-rules"))
    assert "cached 3" in ok(p2w(url, "replay", "pg", "--judge", "rubric-rules"))
    assert "classified 3" in ok(p2w(url, "classify", "pg"))
    assert ok(p2w(url, "verify")).startswith("ok: 6 streams")

    sqlite = tmp_path / "local.db"
    ok(p2w(sqlite, *examples, "--label", "local"))
    diff = json.loads(ok(p2w(sqlite, "diff", "local", f"{url}:pg", "--json")))
    assert diff["b"]["source"] == f"{url}:pg"
    assert [t["task_id"] for t in diff["tasks"]] == shown
    with_password = url.replace("://postgres@", "://postgres:pw-never-shown@")  # the server trusts 127.0.0.1
    masked = url.replace("://postgres@", "://postgres:***@")
    diff = json.loads(ok(p2w(sqlite, "diff", "local", f"{with_password}:pg", "--json")))
    assert diff["b"]["source"] == f"{masked}:pg"
    table = ok(p2w(sqlite, "diff", "local", f"{with_password}:pg"))
    assert "pw-never-shown" not in table and f"{masked}:pg" in table

    bundle = tmp_path / "pg.p2w"
    ok(p2w(url, "export", "pg", "-o", str(bundle)))
    other = postgres_server.fresh_database()
    # the three episodes were imported in one batch (import-trajectories batches files): one episode seal covers them
    assert "74 new events" in ok(p2w(other, "import", str(bundle)))
    assert "0 new events" in ok(p2w(other, "import", str(bundle)))
    ok(p2w(sqlite, "import", str(bundle)))
    assert ok(p2w(sqlite, "verify")).startswith("ok:")


@pytest.mark.parametrize("command", [["runs"], ["verify"], ["show", "x"]])
def test_an_unreachable_database_is_one_line_and_exit_2(command: list[str]) -> None:
    result = CliRunner().invoke(main, ["--db", "postgresql://me:pw@127.0.0.1:1/none", *command])
    assert result.exit_code == 2
    assert "127.0.0.1:1/none" in result.output and "pw@" not in result.output
