"""Segments through the commands that write them: ``import-trajectories``, bundle ``import`` and ``migrate`` (which
is how a database of rows is compacted), each verified and giving the same head digests (docs/design/store.md,
"Segments")."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_runtime.domain import list_runs
from p2w_runtime.store import head_digest, open_store
from tests.helpers.paths import DATA
from tests.helpers.raw_sqlite import raw_sqlite

FIXTURES = DATA / "fixture_dbs"


def p2w(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _stored(db: Path) -> tuple[int, int, int]:
    """(events rows, segments, events in segments); a file of the earlier schema has no segments table."""
    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'segments'").fetchall():
            return rows, 0, 0
        segments, held = conn.execute(
            "SELECT count(*), coalesce(sum(last_seq - first_seq + 1), 0) FROM segments"
        ).fetchone()
    return rows, segments, held


def _bytes(db: Path) -> int:
    """The events' bytes in the file, both tables and their indexes, after VACUUM."""
    with raw_sqlite(db) as conn:
        conn.execute("VACUUM")
        names = [n for n, t in conn.execute("SELECT name, tbl_name FROM sqlite_master") if t in ("events", "segments")]
        return conn.execute(
            f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({','.join('?' * len(names))})", names
        ).fetchone()[0]


async def _digests(db: Path) -> dict[str, str]:
    async with open_store(db, create=False, read_only=True) as store:
        return {r.label: await head_digest(store, r.run_id) for r in await list_runs(store)}


def test_import_trajectories_stores_each_episode_as_a_segment(tmp_path: Path) -> None:
    db = tmp_path / "ex.db"
    assert (
        p2w(
            "--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex"
        ).exit_code
        == 0
    )
    rows, segments, held = _stored(db)
    assert segments == 3 and held > rows  # an episode per segment; the run's own events stay rows
    with raw_sqlite(db) as conn:
        assert conn.execute("SELECT count(*) FROM segments WHERE last_type = 'episode.finished'").fetchone() == (3,)
    assert p2w("--db", str(db), "verify").exit_code == 0


def test_migrate_compacts_a_store_of_rows_into_a_new_file(tmp_path: Path) -> None:
    """The fixture database of the earlier schema: every event a row, written step by step."""
    source = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "v1.db", source)
    target = tmp_path / "compact.db"
    moved = p2w("migrate", "--from", str(source), "--to", str(target))
    assert moved.exit_code == 0, moved.output
    before, after = _stored(source), _stored(target)  # before the verify mark is appended
    assert p2w("--db", str(target), "verify").exit_code == 0
    assert before[1:] == (0, 0) and after[1] > 0 and after[0] + after[2] == before[0]
    assert _bytes(target) < _bytes(source)
    assert asyncio.run(_digests(target)) == asyncio.run(_digests(source))


def test_a_bundle_exported_from_segments_imports_with_the_same_head_digests(tmp_path: Path) -> None:
    db, copy, bundle = tmp_path / "ex.db", tmp_path / "copy.db", tmp_path / "ex.p2w"
    assert (
        p2w(
            "--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex"
        ).exit_code
        == 0
    )
    assert p2w("--db", str(db), "export", "ex", "-o", str(bundle)).exit_code == 0
    imported = p2w("--db", str(copy), "import", str(bundle))
    assert imported.exit_code == 0, imported.output
    assert _stored(copy)[1] == 3
    assert p2w("--db", str(copy), "verify").exit_code == 0
    assert asyncio.run(_digests(copy)) == asyncio.run(_digests(db))
    again = tmp_path / "again.p2w"  # and out again: a bundle of the copy holds the same events
    assert p2w("--db", str(copy), "export", "ex", "-o", str(again)).exit_code == 0
    assert p2w("--db", str(tmp_path / "third.db"), "import", str(again)).exit_code == 0
    assert asyncio.run(_digests(tmp_path / "third.db")) == asyncio.run(_digests(db))
