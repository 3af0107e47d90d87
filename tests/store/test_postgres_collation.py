"""A PostgreSQL database whose collation is a locale (``en_US.UTF-8``, ICU's ``en-US``: what most servers are made
with) sorts ``_`` before ``A`` and ``a`` before ``B``; the store pages streams by name in SQL and orders each page in
Python, so its stream names must compare byte-wise there too."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import uuid7
from p2w_runtime.store import _segments, _sql, connect_store
from p2w_runtime.store.contract.builders import collect, observation
from p2w_runtime.testing.postgres import PostgresServer
from tests.helpers.builders import make_run

STREAMS = ["r/_1", "r/A1", "r/_2", "r/a2", "r/B2", "r/b3"]
"""Byte-wise ``r/A1 < r/B2 < r/_1 < r/_2 < r/a2 < r/b3``; in ``en-US`` ``r/_1 < r/_2 < r/a2 < r/A1 < r/B2 < r/b3``."""


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of 4 rows (``PAGE_SIZE`` times ``STREAMS_PAGE``), so that a page holds the end of one stream and the start
    of the next; events kept as rows."""
    monkeypatch.setattr(_sql, "PAGE_SIZE", 1)
    monkeypatch.setattr(_sql, "STREAMS_PAGE", 4)
    monkeypatch.setattr(_segments, "SEGMENT_MIN_EVENTS", 10**9)


async def _locale_database(server: PostgresServer) -> str:
    name = "t_" + uuid7().replace("-", "")
    conn = await asyncpg.connect(server.url())
    try:  # Debian's PostgreSQL, which the suite installs, is built with ICU: a server without it fails here
        await conn.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'"
        )
    finally:
        await conn.close()
    return server.url(name)


async def _filled(url: str) -> list[tuple[str, int]]:
    async with await connect_store(url) as store:
        for stream in STREAMS:
            await store.append([observation(stream, step) for step in range(1, 4)])
    return sorted((stream, seq) for stream in STREAMS for seq in range(1, 4))


async def _read(url: str, *, read_only: bool = False) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    async with await connect_store(url, read_only=read_only) as store:
        events = [(e.stream, e.seq) for e in await collect(store.read_streams(STREAMS))]
        chained = [(e.stream, e.seq) for e in await collect(store.read_chained(STREAMS))]
    return events, chained


@pytest.mark.usefixtures("small_pages")
async def test_streams_are_read_whole_once_and_in_name_order_in_a_locale_database(
    postgres_server: PostgresServer,
) -> None:
    url = await _locale_database(postgres_server)
    written = await _filled(url)
    assert await _read(url) == (written, written)


async def _made_before(url: str, reader: str) -> None:
    """The stream columns back to the database's collation, as a store made before has them; a role ``reader`` that
    may read and append but does not own the tables (so may not change them)."""
    conn = await asyncpg.connect(url)
    try:
        for table in ("events", "segments"):
            await conn.execute(f'ALTER TABLE {table} ALTER COLUMN stream TYPE VARCHAR COLLATE pg_catalog."default"')
        await conn.execute(
            f"CREATE ROLE {reader} LOGIN; GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {reader}; "
            f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {reader}"
        )
    finally:
        await conn.close()


@pytest.mark.usefixtures("small_pages")
@pytest.mark.parametrize("opener", ["read-only", "a role that may not alter the tables", "the tables' owner"])
async def test_a_locale_database_made_before_is_read_whole_by_every_opener(
    postgres_server: PostgresServer, opener: str
) -> None:
    url = await _locale_database(postgres_server)
    written = await _filled(url)
    reader = "reader_" + uuid7().replace("-", "")
    await _made_before(url, reader)
    if opener == "read-only":
        assert await _read(url, read_only=True) == (written, written)
    elif opener == "the tables' owner":
        assert await _read(url) == (written, written)
    else:
        assert await _read(url.replace("postgres@", f"{reader}@")) == (written, written)


@pytest.mark.usefixtures("small_pages")
def test_a_run_in_a_locale_database_is_judged_not_called_out_of_order(postgres_server: PostgresServer) -> None:
    async def made() -> tuple[str, str]:
        url = await _locale_database(postgres_server)
        async with await connect_store(url) as store:
            return url, await make_run(store, tasks=("Zoe_Park_A1", "alex_garcia_A1", "Bo_Li_B1"))

    url, run_id = asyncio.run(made())
    result = CliRunner().invoke(main, ["--db", url, "replay", run_id, "--judge", "rubric-rules"])
    assert result.exit_code == 0, result.output
    assert "judged 3, cached 0, failed 0" in result.output, result.output
