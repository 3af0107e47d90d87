"""A PostgreSQL URL read as libpq reads it, given to asyncpg the way asyncpg takes it.

SQLAlchemy hands every query option to asyncpg's ``connect`` as a keyword, and asyncpg lacks most of libpq's
(``sslmode``, ``connect_timeout``, ``application_name``: a ``TypeError``) or takes text where it wants another type.
So the URL is read here and the engine connects through ``Connecting.creator``: only the options below are taken,
any other is refused in one line naming it. A query value is %-decoded and its "+" kept (SQLAlchemy's form decoding
made it a space). ``connect_timeout`` is 10 s when the URL has none, where asyncpg waits 60 s and then fails with an
empty ``TimeoutError``: a server that never answers (a port that accepts and never speaks, a blackholed address)
then costs seconds and ends in a line naming it. Several hosts (``HOST:PORT,HOST:PORT``, or ``?host=A,B&port=P,Q``)
are tried in order, within the timeout each, as libpq tries them."""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import asyncpg
from sqlalchemy.engine import URL, make_url

from p2w_runtime.store._event_store import StoreError, StoreUnavailable
from p2w_runtime.store._location import PASSWORD, URL_PATTERN, split_query

DEFAULT_CONNECT_TIMEOUT_S = 10.0
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
"""libpq's ``sslmode`` values, which asyncpg's ``ssl`` takes as text (``ssl``: SQLAlchemy's spelling of the option,
the same values)."""
ACCEPTED = ("application_name", "connect_timeout", "host", "password", "port", "ssl", "sslmode", "user")
"""Of an option given twice, the last counts, as libpq reads it (asyncpg refused the pair)."""
_FROM_ENVIRONMENT = frozenset(
    {"passfile", "sslcert", "sslcrl", "sslkey", "sslrootcert", "ssl_min_protocol_version", "ssl_max_protocol_version"}
)
"""libpq options not taken from the URL that asyncpg reads from their environment variables, as libpq does (``PG`` +
the name, upper case, no ``_``): the refusal names the variable."""
_HOSTS = re.compile(r"[^:/]+://(?:[^:/]*(?::[^@]*)?@)?(?P<hosts>[^/?]*)")
"""The host list: after the user info as the URL parser ends it, up to the database or the query."""
_PORT = re.compile(r"[0-9]*")
Address = tuple[str | None, int | None]
"""A host (name, address or a Unix socket's folder) and port; None: asyncpg's default (``PGHOST`` / ``PGPORT``, else
the local socket and 5432, as libpq)."""
_NEXT_HOST = (OSError, asyncpg.CannotConnectNowError)
"""A host that cannot be reached (refused, no answer, a name that does not resolve) or a server starting up: the next
host is tried. Any other error (a role, database or password the server refuses) ends it, as in libpq."""


def _server(address: Address) -> str:
    host, port = address
    host = host or "localhost"
    return f"{f'[{host}]' if ':' in host else host}:{port or 5432}"


def _within(timeout_s: float | None) -> str:
    return f" within {timeout_s:g} s" if timeout_s is not None else ""


def _failure(exc: BaseException, timeout_s: float | None) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer{_within(timeout_s)}"
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True, slots=True)
class Connecting:
    """Where the driver connects, as whom, within how long for each host (None: no limit)."""

    url: str = field(repr=False)
    """As given: what another process opens the same store with."""
    addresses: tuple[Address, ...]
    timeout_s: float | None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    ssl: str | None = None
    """One of ``SSL_MODES``; None: asyncpg's default (``PGSSLMODE``, else ``prefer``, as libpq)."""
    application_name: str | None = None

    @property
    def server(self) -> str:
        """``host:port``, comma-separated for several, as messages name them."""
        return ",".join(map(_server, self.addresses))

    def creator(self, server_settings: dict[str, str]) -> Callable[[], Awaitable[asyncpg.Connection]]:
        """The engine's ``async_creator``: ``server_settings`` with the URL's ``application_name`` over its own."""
        named = {} if self.application_name is None else {"application_name": self.application_name}
        args: dict[str, Any] = {
            "user": self.user,
            "password": self.password,
            "database": self.database,
            "server_settings": server_settings | named,
            "timeout": self.timeout_s,
        }
        if self.ssl is not None:
            args["ssl"] = self.ssl

        async def connect() -> asyncpg.Connection:
            return await self._first_to_accept(args)

        return connect

    async def _first_to_accept(self, args: dict[str, Any]) -> asyncpg.Connection:
        """Each host in turn, within the timeout each, as libpq tries them (asyncpg's own list shares one timeout, so
        a first host that never answers left the others untried). Of one host, its error; of several, all of theirs
        in one (a ``TimeoutError`` when none answered)."""
        failed: list[tuple[Address, BaseException]] = []
        for host, port in self.addresses:
            try:
                return await asyncpg.connect(host=host, port=port, **args)
            except _NEXT_HOST as exc:
                if len(self.addresses) == 1:
                    raise
                failed.append(((host, port), exc))
        if all(isinstance(exc, TimeoutError) for _, exc in failed):
            raise TimeoutError
        raise ConnectionError("; ".join(f"{_server(at)}: {_failure(exc, self.timeout_s)}" for at, exc in failed))

    def no_answer(self, label: str) -> StoreUnavailable:
        within = _within(self.timeout_s)
        each = " each" if within and len(self.addresses) > 1 else ""
        return StoreUnavailable(
            f"{label}: no answer from {self.server}{within}{each} (to wait longer, add ?connect_timeout=SECONDS to the "
            "URL)"
        )


def _last(url: URL, name: str) -> str | None:
    """The option's value; of an option given twice, the last, as libpq reads it."""
    given = url.query.get(name)
    return given[-1] if isinstance(given, tuple) else given


def _refuse_unknown(url: URL, label: str) -> None:
    unknown = sorted(set(url.query) - set(ACCEPTED))
    if not unknown:
        return
    name = unknown[0]
    takes = f"(it takes {', '.join(ACCEPTED)})"
    if not name:  # "?=VALUE"
        raise StoreError(f"{label}: the URL has an option with no name {takes}")
    hint = (
        f"; set it as the environment variable PG{name.replace('_', '').upper()}" if name in _FROM_ENVIRONMENT else ""
    )
    raise StoreError(f"{label}: the URL option {name} is not one p2w-rt takes{hint} {takes}")


def _timeout_s(url: URL, label: str) -> float | None:
    """libpq's ``connect_timeout``: seconds; 0 or less: no limit."""
    text = _last(url, "connect_timeout")
    if text is None:
        return DEFAULT_CONNECT_TIMEOUT_S
    try:
        timeout_s = float(text)
    except ValueError:
        timeout_s = math.nan
    if not math.isfinite(timeout_s):
        raise StoreError(f"{label}: connect_timeout={text!r} in the URL is not a number of seconds")
    return timeout_s if timeout_s > 0 else None


def _ssl_mode(url: URL, label: str) -> str | None:
    modes = {name: mode for name in ("sslmode", "ssl") if (mode := _last(url, name)) is not None}
    for name, mode in modes.items():
        if mode not in SSL_MODES:
            raise StoreError(f"{label}: {name}={mode!r} in the URL is not one of {', '.join(SSL_MODES)}")
    if len(set(modes.values())) > 1:
        raise StoreError(f"{label}: sslmode={modes['sslmode']!r} and ssl={modes['ssl']!r} in the URL disagree")
    return next(iter(modes.values()), None)


def _host_list(text: str) -> tuple[list[str], list[str]]:
    """libpq's ``HOST[:PORT],...`` (a host %-decoded, an IPv6 address in brackets): hosts and ports, "" where none.
    A port that is not a number may be a piece of an unescaped password: ``ValueError``, which quotes nothing."""
    hosts, ports = [], []
    for entry in text.split(","):
        if entry.startswith("["):
            host, bracket, rest = entry[1:].partition("]")
            if not bracket or rest[:1] not in ("", ":"):
                raise ValueError("not an IPv6 address in brackets")
            port = rest[1:]
        else:
            host, _, port = entry.partition(":")
        if not _PORT.fullmatch(unquote(port)):
            raise ValueError("not a port number")
        hosts.append(unquote(host))
        ports.append(unquote(port))
    return hosts, ports


def _addresses(url: URL, hosts: list[str], ports: list[str], label: str) -> tuple[Address, ...]:
    """The URL's hosts and ports, or its ``host`` / ``port`` options in their place: one port for every host, or one
    port each (``:PORT`` left out, or an empty one: the default), as libpq pairs them."""
    hosts = hosts if (option := _last(url, "host")) is None else option.split(",")
    if (option := _last(url, "port")) is not None:
        ports = option.split(",")
        if not all(_PORT.fullmatch(port) for port in ports):
            raise StoreError(f"{label}: port={option!r} in the URL is not a port number (or a list of them)")
    if len(ports) == 1:
        ports *= len(hosts)
    if len(ports) != len(hosts):
        raise StoreError(f"{label}: {len(ports)} ports for the hosts {','.join(hosts)} (give one, or one per host)")
    return tuple((host or None, int(port) if port else None) for host, port in zip(hosts, ports, strict=True))


def connecting(url: str, label: str) -> Connecting:
    """``url`` as the driver takes it, and the options read from it.

    A password's unescaped "@" ends it early for the URL parser, and the rest of it becomes the host, the database
    or the query, which messages name: such a URL is refused (``ValueError``) before any part of it is read. An "@"
    in the query is the option's text, as libpq reads it: the parser, whose user name runs to the last "@", gets it
    %-escaped and unescapes it with the option's value; the same for a "+", which it would read as a space. The host
    list is read here (the parser takes one host and one port)."""
    head, query = split_query(url)
    if (password := PASSWORD.match(head)) is not None and "@" in password[1]:
        raise ValueError("@ in the password")
    hosts = _HOSTS.match(head)
    if hosts is None:
        raise ValueError("no scheme")
    head = head[: hosts.start("hosts")] + head[hosts.end("hosts") :]
    parsed = make_url(URL_PATTERN.sub("postgresql+asyncpg://", head + query.replace("@", "%40").replace("+", "%2B")))
    _refuse_unknown(parsed, label)
    return Connecting(
        url,
        _addresses(parsed, *_host_list(hosts["hosts"]), label),
        _timeout_s(parsed, label),
        user=_last(parsed, "user") or parsed.username,
        password=_last(parsed, "password") or parsed.password,
        database=parsed.database,
        ssl=_ssl_mode(parsed, label),
        application_name=_last(parsed, "application_name"),
    )
