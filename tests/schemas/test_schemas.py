"""The contract: union dispatch, hashing stability, JSON Schema drift, upcasting of old events."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Literal

import pytest
from pydantic import ValidationError

from p2w_rt import schemas
from p2w_rt.schemas import (
    GENESIS_HASH,
    PAYLOAD_ADAPTER,
    Action,
    NewEvent,
    Observation,
    ParsedAction,
    StoredEvent,
    drifted_schemas,
    export_schemas,
)


def test_union_dispatches_on_type() -> None:
    payload = PAYLOAD_ADAPTER.validate_python({"type": "action", "step": 3, "raw": "click [5]", "status": "executed"})
    assert isinstance(payload, Action) and payload.step == 3
    with pytest.raises(ValidationError):
        PAYLOAD_ADAPTER.validate_python({"type": "no.such.type", "step": 1})
    with pytest.raises(ValidationError):
        PAYLOAD_ADAPTER.validate_python({"type": "observation", "step": 1, "url": "x", "surprise": True})


def test_seal_chains_and_detects_any_change() -> None:
    first = StoredEvent.seal(
        NewEvent(stream="r", payload=Observation(step=1, url="http://a")), seq=1, prev_hash=GENESIS_HASH
    )
    second = StoredEvent.seal(
        NewEvent(stream="r", payload=Observation(step=2, url="http://b")), seq=2, prev_hash=first.hash
    )
    assert second.prev_hash == first.hash and second.compute_hash() == second.hash
    tampered = StoredEvent.from_dict({**second.to_dict(), "payload": {**second.payload, "url": "http://c"}})
    assert tampered.compute_hash() != second.hash
    moved = replace(second, position=99)
    assert moved.compute_hash() == second.hash, "position is store-local and must not change the hash"


def test_uuid7_is_time_ordered() -> None:
    ids = [schemas.uuid7() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(i[14] == "7" for i in ids)


def test_parsed_action_renders_grammar() -> None:
    assert ParsedAction(name="type", args=["12", "chinos 32x32", "1"]).render() == "type [12] [chinos 32x32] [1]"


def test_json_schema_files_match_models() -> None:
    assert drifted_schemas() == [], "schemas/json is stale: run `p2w-rt schema export`"


def test_drift_is_detected(tmp_path) -> None:
    export_schemas(tmp_path)
    assert drifted_schemas(tmp_path) == []
    (tmp_path / "payload.action.json").write_text("{}")
    (tmp_path / "payload.obsolete.json").write_text("{}")
    assert drifted_schemas(tmp_path) == ["payload.action.json", "payload.obsolete.json"]


def test_old_event_loads_through_upcaster(monkeypatch: pytest.MonkeyPatch) -> None:
    old = StoredEvent.seal(
        NewEvent(stream="r", payload=schemas.Rationale(step=1, source="planner", text="use size 32x32")),
        seq=1,
        prev_hash=GENESIS_HASH,
    )
    assert old.schema_version == 1

    # the model moves to version 2: a new field with no default
    class RationaleV2(schemas.Payload):
        SCHEMA_VERSION: ClassVar[int] = 2
        type: Literal["rationale"] = "rationale"
        step: int | None
        source: str
        text: str
        cited_entry_ids: list[int] = []
        language: str

    from pydantic import TypeAdapter

    monkeypatch.setitem(schemas._payload_decode.CURRENT_VERSIONS, "rationale", 2)
    monkeypatch.setattr(schemas._payload_decode, "PAYLOAD_ADAPTER", TypeAdapter(RationaleV2))
    with pytest.raises(schemas.UpcastError):
        old.decode()

    @schemas.register_upcaster("rationale", 1)
    def _add_language(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "language": "en"}

    try:
        decoded = old.decode()
    finally:
        schemas.unregister_upcaster("rationale", 1)
    assert decoded.schema_version == 2
    assert decoded.payload.language == "en" and decoded.payload.text == "use size 32x32"
    assert old.compute_hash() == old.hash, "upcasting never rewrites what was stored"
