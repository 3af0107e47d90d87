"""Opening a PostgreSQL store as a user's ``--db`` URL meets it: odd URLs, another tool's tables, a read-only role."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import uuid7
from p2w_runtime.store import ReadOnlyStore, StoreError, connect_store
from p2w_runtime.store.contract.builders import observation
from p2w_runtime.store.postgres import shown_url
from p2w_runtime.testing.postgres import PostgresServer


def p2w(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", db, *args], catch_exceptions=False)  # a traceback fails the test
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:Top@Secret@127.0.0.1:1/db", "postgresql://u:***@127.0.0.1:1/db"),
        ("postgresql://u:Top:Se/cr?#et@127.0.0.1:1/db", "postgresql://u:***@127.0.0.1:1/db"),
        ("postgresql://u:Top@Se:cRet9/x@127.0.0.1:1/db", "postgresql://u:***@127.0.0.1:1/db"),  # port "cRet9"
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_no_part_of_a_password_is_shown_even_unescaped(url: str, shown: str) -> None:
    assert shown_url(url) == shown
    code, output = p2w(url.replace("@h/", "@127.0.0.1:1/"), "runs")
    assert code == 2 and len(output.splitlines()) == 1, output
    assert not any(piece in output for piece in ("Secret", "Se/cr", "cRet9", "pw"))


def test_a_url_option_the_driver_lacks_is_one_line() -> None:
    code, output = p2w("postgresql://me:pw@127.0.0.1:1/none?keepalives=1", "runs")
    assert code == 2 and output.startswith("error: ") and "keepalives" in output and len(output.splitlines()) == 1


async def test_another_tools_events_and_blobs_tables_are_left_untouched(postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database()
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE blobs (k TEXT)")
        for create in (True, False):
            with pytest.raises(StoreError, match="another tool's: left untouched"):
                await connect_store(url, create=create)
        await conn.execute("INSERT INTO events VALUES (1, 'a'); UPDATE events SET name = 'b'")  # its tool still works
        tables = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
        assert [row[0] for row in tables] == ["blobs", "events"]
        assert await conn.fetchval("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal") == 0
    finally:
        await conn.close()


async def _filled_then_read_only(url: str, role: str, how: str) -> None:
    async with await connect_store(url) as store:
        await store.append([observation("r1", 1)])
    conn = await asyncpg.connect(url)
    try:
        if how == "role":
            await conn.execute(f"CREATE ROLE {role} LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        else:
            await conn.execute(f'ALTER DATABASE "{url.rsplit("/", 1)[1]}" SET default_transaction_read_only = on')
    finally:
        await conn.close()


async def _append(url: str) -> None:
    async with await connect_store(url) as store:
        await store.append([observation("r1", 2)])


@pytest.mark.parametrize(("how", "refusal"), [("role", "permission denied"), ("database", "read-only transaction")])
def test_a_read_only_role_or_database_verifies_in_full_and_its_writes_are_read_only_refusals(
    postgres_server: PostgresServer, how: str, refusal: str
) -> None:
    url = postgres_server.fresh_database()
    role = "reader_" + uuid7().replace("-", "")
    asyncio.run(_filled_then_read_only(url, role, how))
    reader = url.replace("postgres@", f"{role}@") if how == "role" else url
    code, output = p2w(reader, "verify", "--full")  # its mark cannot be appended: the check is reported all the same
    assert code == 0 and output.startswith("ok: 1 stream, 1 event,"), output
    with pytest.raises(ReadOnlyStore, match=refusal):
        asyncio.run(_append(reader))
