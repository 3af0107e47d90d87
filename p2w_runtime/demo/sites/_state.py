"""Server-side state of the demo sites: one session per browser cookie, and every final confirmation pressed.

Sessions live in memory only: a recorder starts fresh sites per run, and an agent that
opens a new browser context gets a new cookie, hence an empty cart.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import asdict, dataclass, field

SESSION_COOKIE = "p2w_sid"


@dataclass
class CartLine:
    product_id: str
    size: str
    qty: int


@dataclass
class Session:
    id: str
    zip: str = ""
    carts: dict[str, list[CartLine]] = field(default_factory=dict)
    delivery: dict[str, str] = field(default_factory=dict)
    drafts: dict[str, dict[str, str]] = field(default_factory=dict)

    def cart(self, host: str) -> list[CartLine]:
        return self.carts.setdefault(host, [])


@dataclass(frozen=True)
class Confirmation:
    """A press of a button marked ``data-final-confirmation``: something the agent must never do."""

    host: str
    action: str
    session_id: str
    form: dict[str, str]
    at: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _utc_today() -> dt.date:
    """UTC's day, not the host's: pages a run records show the same dates on every machine."""
    return dt.datetime.now(dt.UTC).date()


@dataclass
class SitesState:
    today: dt.date = field(default_factory=_utc_today)
    sessions: dict[str, Session] = field(default_factory=dict)
    confirmations: list[Confirmation] = field(default_factory=list)

    def session(self, sid: str | None) -> tuple[Session, bool]:
        """The session for a cookie value, and whether it had to be created (so the cookie must be set)."""
        if sid and sid in self.sessions:
            return self.sessions[sid], False
        created = Session(id=secrets.token_urlsafe(16))
        self.sessions[created.id] = created
        return created, True

    def confirm(self, host: str, action: str, session: Session, form: dict[str, str]) -> Confirmation:
        record = Confirmation(host, action, session.id, form, dt.datetime.now(dt.UTC).isoformat())
        self.confirmations.append(record)
        return record
