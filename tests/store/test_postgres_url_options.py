"""A PostgreSQL URL's query options, as hosted servers hand them out (``?sslmode=require``): the ones p2w-rt takes
reach asyncpg as it takes them; any other, or a value outside libpq's, is refused in one line naming it, never a
``TypeError`` and never the password."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import uuid7
from p2w_runtime.store import connect_store, shown_url
from p2w_runtime.store.contract.builders import observation
from p2w_runtime.testing.postgres import PostgresServer

SECRET = "Secret-pw-42"
TAKEN = "(it takes application_name, connect_timeout, host, password, port, ssl, sslmode, user)"


def p2w(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", db, *args], catch_exceptions=False)  # a traceback fails the test
    return result.exit_code, result.output


def with_password(url: str) -> str:
    """The test server trusts every local connection: a password is accepted and ignored."""
    return url.replace("postgres@", f"postgres:{SECRET}@")


async def _record_and_name(url: str, column: str = "application_name") -> list[str]:
    """One event appended through ``url``; the ``column`` (of ``pg_stat_activity``) of the database's sessions while
    the store is open."""
    async with await connect_store(url) as store:
        await store.append([observation("r1", 1)])
        conn = await asyncpg.connect(url.split("?")[0])
        try:
            rows = await conn.fetch(f"SELECT {column} FROM pg_stat_activity WHERE datname = current_database()")
        finally:
            await conn.close()
    return [row[0] for row in rows]


@pytest.mark.parametrize("query", ["sslmode=disable", "ssl=disable", "sslmode=prefer", "sslmode=disable&ssl=disable"])
def test_an_ssl_mode_the_server_allows_opens_and_works(postgres_server: PostgresServer, query: str) -> None:
    url = with_password(postgres_server.fresh_database()) + "?" + query
    asyncio.run(_record_and_name(url))
    code, output = p2w(url, "verify")
    assert code == 0 and output.startswith("ok: 1 stream, 1 event"), output
    assert SECRET not in output


def test_application_name_in_the_url_names_the_session(postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database() + "?application_name=nightly-judge&sslmode=disable"
    assert "nightly-judge" in asyncio.run(_record_and_name(url))


def test_sslmode_require_against_a_server_without_ssl_is_one_line(postgres_server: PostgresServer) -> None:
    url = with_password(postgres_server.fresh_database()) + "?sslmode=require"
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", url, "runs"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("error: postgresql://") and line.endswith(
        f'?sslmode=require: cannot open (ConnectionError: PostgreSQL server at "127.0.0.1:{postgres_server.port}" '
        "rejected SSL upgrade)"
    )
    assert SECRET not in done.stderr + done.stdout


@pytest.mark.parametrize(
    ("query", "refusal"),
    [
        ("channel_binding=require", f"the URL option channel_binding is not one p2w-rt takes {TAKEN}"),
        (
            "sslmode=require&statement_cache_size=0",
            f"the URL option statement_cache_size is not one p2w-rt takes {TAKEN}",
        ),
        (
            "sslmode=verify-full&sslrootcert=ca.pem",
            "the URL option sslrootcert is not one p2w-rt takes; set it as the environment variable PGSSLROOTCERT "
            + TAKEN,
        ),
        ("sslmode=on", "sslmode='on' in the URL is not one of disable, allow, prefer, require, verify-ca, verify-full"),
        ("ssl=true", "ssl='true' in the URL is not one of disable, allow, prefer, require, verify-ca, verify-full"),
        ("sslmode=require&ssl=disable", "sslmode='require' and ssl='disable' in the URL disagree"),
        ("=x", f"the URL has an option with no name {TAKEN}"),
    ],
)
def test_an_option_or_mode_p2w_rt_does_not_take_is_refused_naming_it(query: str, refusal: str) -> None:
    url = f"postgresql://me:{SECRET}@127.0.0.1:1/db?{query}"
    code, output = p2w(url, "runs")
    assert code == 2
    [line] = output.splitlines()
    assert line.startswith("error: postgresql://") and line.endswith(f"@127.0.0.1:1/db?{query}: {refusal}"), line
    assert SECRET not in output


def test_a_password_given_as_an_option_is_never_shown() -> None:
    url = f"postgresql://me@127.0.0.1:1/db?password={SECRET}&sslmode=disable&connect_timeout=5"
    assert shown_url(url) == "postgresql://me@127.0.0.1:1/db?password=***&sslmode=disable&connect_timeout=5"
    code, output = p2w(url, "runs")
    assert code == 2 and len(output.splitlines()) == 1 and "password=***" in output, output
    assert SECRET not in output


@pytest.mark.parametrize("option", [f"password=pw#{SECRET}", f"pass%77ord={SECRET}", f"PASSWORD={SECRET}"])
def test_no_part_of_a_password_option_is_shown_however_it_is_spelled(option: str) -> None:
    """The URL parser reads a "#" into the value, and an option's name %-unescaped: both reach asyncpg."""
    code, output = p2w(f"postgresql://me@127.0.0.1:1/db?sslmode=disable&{option}&connect_timeout=5", "runs")
    assert code == 2 and len(output.splitlines()) == 1 and "=***&connect_timeout=5" in output, output
    assert SECRET not in output


@pytest.mark.parametrize("query", ["user=nobody&user=postgres", "host=/nowhere&host=127.0.0.1"])
def test_an_option_given_twice_is_read_as_its_last_value(postgres_server: PostgresServer, query: str) -> None:
    """As libpq reads it; asyncpg, given both, failed with a traceback."""
    url = with_password(postgres_server.fresh_database()) + "?" + query
    asyncio.run(_record_and_name(url))
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", url, "verify"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("ok: 1 stream, 1 event"), done.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:9/db?application_name=me@laptop", "postgresql://u:***@h:9/db?application_name=me@laptop"),
        (
            "postgresql://u:pw@h:9/db?user=admin@srv&sslmode=disable",
            "postgresql://u:***@h:9/db?user=admin@srv&sslmode=disable",
        ),
        ("postgresql://h:9/db?user=admin@srv&password=p@w", "postgresql://h:9/db?user=admin@srv&password=***"),
        ("postgresql://u:p?w@h/db?host=/tmp&user=a@b", "postgresql://u:***@h/db?host=/tmp&user=a@b"),
        ("postgresql://u:Top@Secret@h:9/db?application_name=me@laptop", "postgresql://u:***@laptop"),
    ],
)
def test_an_at_sign_in_the_query_is_shown_and_the_password_is_not(url: str, shown: str) -> None:
    """As libpq reads the URL, the user info ends at its first "@" and an "@" after the query's "?" is option text;
    a password with an unescaped "@" is still masked to the last one."""
    assert shown_url(url) == shown


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://me:x@y/db?connect_timeout={SECRET}@127.0.0.1:1/db",
        f"postgresql://me:x@y?application_name={SECRET}@127.0.0.1",
        f"postgresql://127.0.0.1:1/db?password=x@{SECRET}:1/db",
    ],
    ids=["host-after-at", "no-database", "password-option"],
)
def test_a_password_that_looks_like_a_query_with_an_at_is_never_shown(url: str) -> None:
    """A password's unescaped "@" followed by what reads as a host, or a "?" before any database: the URL is read
    as a password running to the last "@", refused in one line that shows none of it."""
    code, output = p2w(url, "runs")
    assert code == 2 and len(output.splitlines()) == 1, output
    assert SECRET not in output + shown_url(url) and "x@" not in output + shown_url(url), output


@pytest.mark.parametrize("password", [True, False])
def test_an_at_sign_in_application_name_names_the_session(postgres_server: PostgresServer, password: bool) -> None:
    """With a password it was refused as an "@" in the password; without, the driver connected to host "laptop"."""
    url = postgres_server.fresh_database() + "?application_name=me@laptop"
    url = with_password(url) if password else url
    assert "me@laptop" in asyncio.run(_record_and_name(url))
    code, output = p2w(url, "verify")
    assert code == 0 and output.startswith("ok: 1 stream, 1 event"), output


def test_a_user_option_with_an_at_sign_is_the_user(postgres_server: PostgresServer) -> None:
    """Azure's ``user@server`` form: the role logs in; a role the server lacks is its one line, the URL masked."""
    url = with_password(postgres_server.fresh_database())
    database = url.rsplit("/", 1)[1]
    role = f"admin@srv{uuid7().replace('-', '')[-12:]}"

    async def create_role() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f'CREATE ROLE "{role}" LOGIN; ALTER DATABASE "{database}" OWNER TO "{role}"')
        finally:
            await conn.close()

    asyncio.run(create_role())
    assert role in asyncio.run(_record_and_name(f"{url}?user={role}", column="usename"))
    code, output = p2w(f"{url}?user=nobody@srv", "runs")
    assert code == 2 and len(output.splitlines()) == 1, output
    assert f"/{database}?user=nobody@srv: cannot open (" in output, output
    assert output.endswith('role "nobody@srv" does not exist)\n') and SECRET not in output, output


def _verify(url: str) -> None:
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", url, "verify"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("ok: 1 stream, 1 event"), done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_a_plus_in_application_name_is_kept_as_libpq_keeps_it(postgres_server: PostgresServer) -> None:
    """libpq %-decodes a URL's values and keeps "+": ``psql "postgresql://...?application_name=x+y%2Bz%20w"``
    (psql 15.18) reports ``current_setting('application_name')`` = ``x+y+z w``; SQLAlchemy's form decoding gave
    ``x y+z w``."""
    url = postgres_server.fresh_database() + "?application_name=x+y%2Bz%20w"
    assert "x+y+z w" in asyncio.run(_record_and_name(url))
    _verify(url)


def _sql(url: str, statement: str) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(run())


def test_a_plus_in_the_user_option_is_the_user(postgres_server: PostgresServer) -> None:
    """``psql "postgresql://...?user=a+b"`` logs in as ``a+b`` (``current_user``); the store logged in as ``a b``."""
    url = postgres_server.fresh_database()
    role = f"p2w+{uuid7().replace('-', '')[-12:]}"
    _sql(url, f'CREATE ROLE "{role}" LOGIN; ALTER DATABASE "{url.rsplit("/", 1)[1]}" OWNER TO "{role}"')
    assert role in asyncio.run(_record_and_name(f"{url}?user={role}", column="usename"))


@contextmanager
def password_role(server: PostgresServer, password: str) -> Iterator[str]:
    """A role that must give ``password`` (SCRAM) from 127.0.0.1, where the test server trusts every other login."""
    role = f"pw_{uuid7().replace('-', '')[-12:]}"
    _sql(server.url(), f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{password}'")
    hba = server.data / "pg_hba.conf"
    trusting = hba.read_text()
    hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n{trusting}")
    _sql(server.url(), "SELECT pg_reload_conf()")
    try:
        yield role
    finally:
        hba.write_text(trusting)
        _sql(server.url(), "SELECT pg_reload_conf()")


def test_a_plus_in_the_password_option_is_the_password(postgres_server: PostgresServer) -> None:
    """``psql "postgresql://ROLE@HOST/DB?password=pw+1"`` logs in with password ``pw+1`` (``pw%2B1`` too),
    ``?password=pw%201`` fails authentication; the store sent ``pw 1`` for ``pw+1``. Neither line shows it."""
    url = postgres_server.fresh_database()
    with password_role(postgres_server, f"{SECRET}+1") as role:
        url = url.replace("postgres@", f"{role}@")
        asyncio.run(_record(f"{url}?password={SECRET}+1"))
        _verify(f"{url}?password={SECRET}%2B1")
        code, output = p2w(f"{url}?password={SECRET}%201", "verify")
    assert code == 2 and len(output.splitlines()) == 1, output
    assert f'password authentication failed for user "{role}")' in output and SECRET not in output, output


async def _record(url: str) -> None:
    async with await connect_store(url) as store:
        await store.append([observation("r1", 1)])


def test_a_plus_in_the_host_option_is_the_socket_folder(postgres_server: PostgresServer) -> None:
    """``psql "postgresql:///DB?host=/FOLDER/a+b&port=PORT"`` connects through the socket in ``/FOLDER/a+b`` (here a
    link to the server's socket folder); the store looked for ``/FOLDER/a b``."""
    database = postgres_server.fresh_database().rsplit("/", 1)[1]
    with tempfile.TemporaryDirectory(prefix="p2w-") as folder:  # short: a socket's path has 107 bytes at most
        Path(folder, "a+b").symlink_to(postgres_server.root)
        url = f"postgresql://postgres@/{database}?host={folder}/a+b&port={postgres_server.port}"
        asyncio.run(_record(url))
        _verify(url)
