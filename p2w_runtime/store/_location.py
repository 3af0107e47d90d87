"""What ``--db`` names, told apart without loading a database driver: every command parses ``--db`` first."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote_plus

URL_PATTERN = re.compile(r"^postgres(ql)?(\+asyncpg)?://", re.IGNORECASE)
_ANY_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and URL_PATTERN.match(location) is not None


def store_location(text: str) -> Path | str:
    """What ``--db`` / ``P2W_DB`` name: a ``postgresql://`` URL stays text, anything else is a SQLite file.

    A folder is refused, and so is a URL of another scheme (``mysql://``, a misspelt ``postgresq://``): ``ValueError``
    naming it without its password (taken for a file path, its "//" would fold into "/", which no mask matches)."""
    if is_postgres_url(text):
        return text
    if _ANY_URL.match(text):
        raise ValueError(f"{shown_url(text)}: neither a postgresql:// URL nor a SQLite file")
    if (path := Path(text)).is_dir():
        raise ValueError(f"{path}: is a directory, not a database file")
    return path


PASSWORD = re.compile(r"^[^:/]+://[^:@/]*:(.*)@", re.DOTALL)
"""From the user name's colon to the last "@": all of a password, even one with an unescaped "@", ":" or "/"."""
_AS_LIBPQ_READS = re.compile(
    r"""[^:/]+://
    (?:[^@/]*@)?                        # user info: to the first "@" before any "/", as libpq reads it
    (?:\[[^\]@/]*\]|[^:/?@\[\]]*)       # host
    (?::[0-9]*)?                        # port
    /[^?@]*                             # database
    (?P<query>\?(?:[^&=@]*=[^&=@]*(?:@[^&=/:]*)?(?:&|\Z))*)""",
    re.VERBOSE | re.DOTALL,
)
"""A URL of the documented form, as libpq reads it: its "@" in the query are option text (``?user=admin@srv``),
not the end of a password. A password with an unescaped "@" can make a URL look like one with a query: an option
holding a "/" or ":" after its "@" (a host, port or database), or a "?" before any database, is read as such a
password."""
_QUERY_OPTION = re.compile(r"[?&]([^=&]*)=([^&]*)")
"""An option of the query and its value, to the next "&" as the URL parser reads it ("#" included)."""


def split_query(url: str) -> tuple[str, str]:
    """The URL before its query, and the query from its "?" ("": none, or a URL read as having none)."""
    libpq = _AS_LIBPQ_READS.fullmatch(url)
    if libpq is None:
        return url, ""
    return url[: libpq.start("query")], libpq["query"]


def shown_url(url: str) -> str:
    """The URL as messages name it: never its password, nor any part of it.

    Hidden are the password before the host and the value of libpq's ``?password=`` option, which the driver takes
    too, however its name is spelled (``pass%77ord``): all of either, as far as any reading of the URL runs it."""
    head, _ = split_query(url)
    hidden = [option.span(2) for option in _QUERY_OPTION.finditer(url) if unquote_plus(option[1]).lower() == "password"]
    if (password := PASSWORD.match(head)) is not None:
        hidden.append(password.span(1))
    shown, at = "", 0
    for start, end in sorted(hidden):
        if start >= at:
            shown += url[at:start] + "***"
        at = max(at, end)
    return shown + url[at:]
