"""A PostgreSQL URL's query options, as hosted servers hand them out (``?sslmode=require``): the ones p2w-rt takes
reach asyncpg as it takes them; any other, or a value outside libpq's, is refused in one line naming it, never a
``TypeError`` and never the password."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import connect_store, shown_url
from p2w_runtime.store.contract.builders import observation
from p2w_runtime.testing.postgres import PostgresServer

SECRET = "Secret-pw-42"
TAKEN = "(it takes application_name, connect_timeout, host, password, ssl, sslmode, user)"


def p2w(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", db, *args], catch_exceptions=False)  # a traceback fails the test
    return result.exit_code, result.output


def with_password(url: str) -> str:
    """The test server trusts every local connection: a password is accepted and ignored."""
    return url.replace("postgres@", f"postgres:{SECRET}@")


async def _record_and_name(url: str) -> list[str]:
    """One event appended through ``url``; the application names of the database's sessions while the store is open."""
    async with await connect_store(url) as store:
        await store.append([observation("r1", 1)])
        conn = await asyncpg.connect(url.split("?")[0])
        try:
            rows = await conn.fetch("SELECT application_name FROM pg_stat_activity WHERE datname = current_database()")
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
