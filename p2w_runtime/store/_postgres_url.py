"""How long connecting to a PostgreSQL server may take: libpq's ``connect_timeout`` option of the URL's query, read
here because asyncpg takes no such option (it would refuse the URL), and 10 s when the URL has none, where asyncpg
waits 60 s and then fails with an empty ``TimeoutError``. A server that never answers (a port that accepts and never
speaks, a blackholed address) then costs seconds and ends in a line naming it."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sqlalchemy.engine import URL, make_url

from p2w_runtime.store._event_store import StoreError, StoreUnavailable
from p2w_runtime.store._location import URL_PATTERN

DEFAULT_CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Connecting:
    """Where the driver connects (the URL without ``connect_timeout``), within how long (None: no limit)."""

    url: URL
    timeout_s: float | None
    server: str
    """``host:port``, as messages name it."""

    def no_answer(self, label: str) -> StoreUnavailable:
        within = f" within {self.timeout_s:g} s" if self.timeout_s is not None else ""
        return StoreUnavailable(
            f"{label}: no answer from {self.server}{within} (to wait longer, add ?connect_timeout=SECONDS to the URL)"
        )


_PASSWORD = re.compile(r"^[^:/]+://[^:@/]*:(.*)@", re.DOTALL)
"""The password as ``shown_url`` masks it: from the user name's colon to the last "@"."""


def connecting(url: str, label: str) -> Connecting:
    """``url`` as the driver takes it; ``connect_timeout`` as libpq reads it (seconds; 0 or less: no limit).

    A password's unescaped "@" ends it early for the URL parser, and the rest of it becomes the host, the database
    or the query, which messages name: such a URL is refused (``ValueError``) before any part of it is read."""
    if (password := _PASSWORD.match(url)) is not None and "@" in password[1]:
        raise ValueError("@ in the password")
    parsed = make_url(URL_PATTERN.sub("postgresql+asyncpg://", url))
    given = parsed.query.get("connect_timeout")
    timeout_s: float | None = DEFAULT_CONNECT_TIMEOUT_S
    if given is not None:
        text = given[-1] if isinstance(given, tuple) else given
        try:
            timeout_s = float(text)
        except ValueError:
            timeout_s = math.nan
        if not math.isfinite(timeout_s):
            raise StoreError(f"{label}: connect_timeout={text!r} in the URL is not a number of seconds")
        timeout_s = timeout_s if timeout_s > 0 else None
    server = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
    return Connecting(parsed.difference_update_query(["connect_timeout"]), timeout_s, server)
