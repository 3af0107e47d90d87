"""Records straight from stored payload text, for the event types nearly every event of a run has.

An observation, a rationale, an action, a retrieval or an LLM call becomes its record in one ``msgspec``
pass over the stored JSON: the fields the trajectory keeps are checked (types, literals, lengths, no unknown
field in a command) and nothing else is built. Any text this path does not take (an older schema version, a
value it refuses, an odd event id) goes through the payload model instead, which gives the authoritative
answer and pydantic's error naming the field. The path is never looser than the payload model on a kept field
(``tests/domain/test_trajectory_decode.py``); the measurements that chose it are in docs/design/projection.md.
"""

from __future__ import annotations

import msgspec

from p2w_rt.schemas import CURRENT_VERSIONS
from p2w_runtime.domain.trajectory._envelope import StoredEnvelope
from p2w_runtime.domain.trajectory._records import (
    ActionRecord,
    LlmCallRecord,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
)

FastRecord = ObservationRecord | RationaleRecord | ActionRecord | RetrievalRecord | LlmCallRecord

FAST_RECORDS: dict[str, type[FastRecord]] = {
    "observation": ObservationRecord,
    "rationale": RationaleRecord,
    "action": ActionRecord,
    "history.retrieval": RetrievalRecord,
    "llm.call": LlmCallRecord,
}
"""The event types this path decodes, and the record each becomes."""

_DECODERS: dict[str, msgspec.json.Decoder[FastRecord]] = {
    kind: msgspec.json.Decoder(record) for kind, record in FAST_RECORDS.items()
}
_VERSIONS = {kind: {CURRENT_VERSIONS[kind]} for kind in FAST_RECORDS} | {
    "action": {1, CURRENT_VERSIONS["action"]},
    "llm.call": {1, CURRENT_VERSIONS["llm.call"]},
}
"""The schema versions whose text each record reads as it is: the current one, an ``action`` of version 1 (version 2
added ``duration_s`` only, which a version 1 text lacks: the record's default, as the upcaster's) and an ``llm.call``
of version 1 (version 2 added ``choices`` only, which the record does not keep)."""


def decode_record(event: StoredEnvelope) -> FastRecord | None:
    """The event's record, or None when this path does not take the event (the caller decodes its payload).

    The event id is appended to the payload object as its last key, so it is the one decoded even if the text
    carries an ``event_id`` of its own (a payload model refuses such a key; the record ignores it).
    """
    decoder = _DECODERS.get(event.type)
    if decoder is None or event.schema_version not in _VERSIONS[event.type]:
        return None
    event_id, text = event.event_id, event.payload_json
    if '"' in event_id or "\\" in event_id or not text.endswith("}"):
        return None
    try:
        return decoder.decode(f'{text[:-1]},"event_id":"{event_id}"}}')
    except msgspec.MsgspecError:
        return None
