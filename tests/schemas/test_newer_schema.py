"""An event written by a later p2w-rt (its schema version above this code's model) is one line on every command
that meets it, exit 2, never a traceback: the event is not wrong, this code is too old to read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2w_rt.schemas import GENESIS_HASH, StoredEvent
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.raw_sqlite import raw_sqlite

COLUMNS = ("event_id", "stream", "seq", "type", "schema_version", "recorded_at", "causation_id")


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("newer") / "examples.db"
    done = p2w_rt(db, "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex")
    assert done.returncode == 0, done.stderr
    return db


def add_from_the_future(db: Path, type_: str, *, own_stream: bool) -> None:
    """Append, correctly chained, a copy of the first ``type_`` event at schema version 99: in a stream of its own
    (a new episode of the run), or after the run's own stream's last event."""
    with raw_sqlite(db, isolation_level=None) as conn:
        stream, recorded_at, payload = conn.execute(
            "SELECT stream, recorded_at, payload FROM events WHERE type = ? ORDER BY position LIMIT 1", (type_,)
        ).fetchone()
        seq, prev = 1, GENESIS_HASH
        if own_stream:
            stream += "#9"
        else:
            seq, prev = conn.execute(
                "SELECT seq + 1, hash FROM events WHERE stream = ? ORDER BY seq DESC", (stream,)
            ).fetchone()
        event = StoredEvent.from_dict(
            dict(
                zip(
                    COLUMNS,
                    (f"01a23b61-0000-7000-8000-00000000000{seq}", stream, seq, type_, 99, recorded_at, None),
                    strict=True,
                )
            )
            | {"payload": json.loads(payload), "blobs": [], "prev_hash": prev, "hash": ""}
        )
        (position,) = conn.execute("SELECT max(position) + 1 FROM events").fetchone()
        conn.execute(
            f"INSERT INTO events VALUES ({', '.join('?' * 12)})",
            (position, event.event_id, stream, seq, type_, 99, recorded_at, None, event.payload_json, "[]", prev)
            + (event.compute_hash(),),
        )


COMMANDS = (
    ("runs",),
    ("verify",),
    ("verify", "ex", "--json"),
    ("show", "ex"),
    ("show", "ex", "Jordan_Park_A1"),
    ("export", "ex", "-o", "ex.p2w"),
    ("replay", "ex", "--judge", "rubric-rules"),
    ("classify", "ex"),
    ("metrics", "ex"),
    ("diff", "ex", "ex"),
    ("view", "--export", "site", "ex"),
)


@pytest.mark.parametrize(("type_", "own_stream", "current"), [("run.finished", False, 2), ("episode.started", True, 3)])
def test_every_command_says_upgrade_in_one_line(
    examples: Path, tmp_path: Path, type_: str, own_stream: bool, current: int
) -> None:
    db = tmp_path / "newer.db"
    db.write_bytes(examples.read_bytes())
    add_from_the_future(db, type_, own_stream=own_stream)
    said = [f"error: {type_} stored at schema version 99 is newer than this code ({current}); upgrade p2w-rt"]
    for command in COMMANDS:
        done = p2w_rt(db, *command)
        assert (done.returncode, done.stderr.splitlines()) == (2, said), command
    assert not (tmp_path / "ex.p2w").exists() and not (tmp_path / "site").exists()
