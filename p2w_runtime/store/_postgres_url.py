"""A PostgreSQL URL's query as libpq reads it, given to asyncpg the way asyncpg takes it.

SQLAlchemy hands every query option to asyncpg's ``connect`` as a keyword, and asyncpg lacks most of libpq's
(``sslmode``, ``connect_timeout``, ``application_name``: a ``TypeError``) or takes text where it wants another type.
So only the options below pass, each read here; any other is refused in one line naming it. ``connect_timeout`` is
10 s when the URL has none, where asyncpg waits 60 s and then fails with an empty ``TimeoutError``: a server that
never answers (a port that accepts and never speaks, a blackholed address) then costs seconds and ends in a line
naming it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import URL, make_url

from p2w_runtime.store._event_store import StoreError, StoreUnavailable
from p2w_runtime.store._location import PASSWORD, URL_PATTERN, split_query

DEFAULT_CONNECT_TIMEOUT_S = 10.0
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
"""libpq's ``sslmode`` values, which asyncpg's ``ssl`` takes as text."""
_READ_HERE = ("application_name", "connect_timeout", "ssl", "sslmode")
"""Taken out of the URL and given to asyncpg as the arguments it has for them (``ssl``: SQLAlchemy's asyncpg
spelling of ``sslmode``, the same values)."""
_PASSED_ON = ("host", "password", "user")
"""Options asyncpg's ``connect`` takes as text under the same name (``host``: a Unix socket's folder); of one given
twice, the last, as libpq reads it (asyncpg refuses the pair)."""
ACCEPTED = tuple(sorted(_READ_HERE + _PASSED_ON))
_FROM_ENVIRONMENT = frozenset(
    {"passfile", "sslcert", "sslcrl", "sslkey", "sslrootcert", "ssl_min_protocol_version", "ssl_max_protocol_version"}
)
"""libpq options not taken from the URL that asyncpg reads from their environment variables, as libpq does (``PG`` +
the name, upper case, no ``_``): the refusal names the variable."""


@dataclass(frozen=True, slots=True)
class Connecting:
    """Where the driver connects (the URL without the options read here), within how long (None: no limit)."""

    url: URL
    timeout_s: float | None
    server: str
    """``host:port``, as messages name it."""
    ssl: str | None = None
    """One of ``SSL_MODES``; None: asyncpg's default (``PGSSLMODE``, else ``prefer``, as libpq)."""
    application_name: str | None = None

    def connect_args(self, server_settings: dict[str, str]) -> dict[str, Any]:
        """asyncpg's ``connect`` arguments: ``server_settings`` with the URL's ``application_name`` over its own."""
        named = {} if self.application_name is None else {"application_name": self.application_name}
        args: dict[str, Any] = {"server_settings": server_settings | named, "timeout": self.timeout_s}
        if self.ssl is not None:
            args["ssl"] = self.ssl
        return args

    def no_answer(self, label: str) -> StoreUnavailable:
        within = f" within {self.timeout_s:g} s" if self.timeout_s is not None else ""
        return StoreUnavailable(
            f"{label}: no answer from {self.server}{within} (to wait longer, add ?connect_timeout=SECONDS to the URL)"
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


def connecting(url: str, label: str) -> Connecting:
    """``url`` as the driver takes it, and the options read from it.

    A password's unescaped "@" ends it early for the URL parser, and the rest of it becomes the host, the database
    or the query, which messages name: such a URL is refused (``ValueError``) before any part of it is read. An "@"
    in the query is the option's text, as libpq reads it: the parser, whose user name runs to the last "@", gets it
    %-escaped and unescapes it with the option's value."""
    head, query = split_query(url)
    if (password := PASSWORD.match(head)) is not None and "@" in password[1]:
        raise ValueError("@ in the password")
    parsed = make_url(URL_PATTERN.sub("postgresql+asyncpg://", head + query.replace("@", "%40")))
    _refuse_unknown(parsed, label)
    passed = {name: value for name in _PASSED_ON if (value := _last(parsed, name)) is not None}
    return Connecting(
        parsed.difference_update_query(_READ_HERE).update_query_dict(passed),
        _timeout_s(parsed, label),
        f"{parsed.host or 'localhost'}:{parsed.port or 5432}",
        ssl=_ssl_mode(parsed, label),
        application_name=_last(parsed, "application_name"),
    )
