"""`p2w-rt migrate`: a whole store to PostgreSQL and back, every chain verified; a tampered source moves nothing."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.domain import list_runs
from p2w_runtime.store import head_digest, open_store
from p2w_runtime.testing.postgres import PostgresServer
from tests.helpers.paths import DATA
from tests.helpers.raw_sqlite import raw_sqlite

FIXTURES = DATA / "fixture_dbs"
FACTS = json.loads((FIXTURES / "v1.json").read_text())


def p2w(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


async def _facts(location: str | Path) -> tuple[tuple[int, int], dict[str, str]]:
    async with open_store(location, create=False, read_only=True) as store:
        digests = {r.label: await head_digest(store, r.run_id) for r in await list_runs(store)}
        return await store.count(), digests


def test_a_store_moves_to_postgres_and_back_unchanged(postgres_server: PostgresServer, tmp_path: Path) -> None:
    source = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "v1.db", source)
    url = postgres_server.fresh_database()
    first = p2w("migrate", "--from", str(source), "--to", url)
    assert first.exit_code == 0, first.output
    assert "141 events (141 new, 0 already there), 1 blobs, 13 streams" in first.output
    again = p2w("migrate", "--from", str(source), "--to", url)
    assert "(0 new, 141 already there)" in again.output
    expected = ((FACTS["events"], FACTS["blobs"]), {k: v["head_digest"] for k, v in FACTS["runs"].items()})
    assert asyncio.run(_facts(url)) == expected
    back = tmp_path / "back.db"
    assert p2w("migrate", "--from", url, "--to", str(back)).exit_code == 0
    assert asyncio.run(_facts(back)) == expected
    assert p2w("--db", url, "verify").exit_code == 0


def test_a_tampered_source_is_refused_before_anything_is_written(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    source = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "v1.db", source)
    with raw_sqlite(source) as raw:
        raw.execute("DROP TRIGGER events_no_update")
        edited = raw.execute(
            "UPDATE events SET payload = replace(payload, 'Jordan', 'Jordyn') "
            "WHERE position = (SELECT min(position) FROM events WHERE payload LIKE '%Jordan%')"
        )
        assert edited.rowcount == 1
    url = postgres_server.fresh_database()
    result = CliRunner().invoke(main, ["migrate", "--from", str(source), "--to", url])
    assert result.exit_code == 2
    assert "does not verify, nothing migrated" in result.output

    async def count() -> tuple[int, int]:
        async with open_store(url) as store:
            return await store.count()

    assert asyncio.run(count()) == (0, 0)


def test_a_migration_into_a_store_that_holds_part_of_it_copies_only_the_rest(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    source = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "v1.db", source)
    url = postgres_server.fresh_database()
    bundle = tmp_path / "ao.p2w"
    assert p2w("--db", str(source), "export", "agentoccam", "-o", str(bundle)).exit_code == 0
    imported = p2w("--db", url, "import", str(bundle))
    already = int(imported.output.split(": ")[1].split(" new events")[0])
    resumed = p2w("migrate", "--from", str(source), "--to", url)
    assert resumed.exit_code == 0, resumed.output
    assert f"({FACTS['events'] - already} new, {already} already there)" in resumed.output
    expected = ((FACTS["events"], FACTS["blobs"]), {k: v["head_digest"] for k, v in FACTS["runs"].items()})
    assert asyncio.run(_facts(url)) == expected
