"""Records decoded straight from stored text (``p2w_runtime/domain/trajectory/_decode.py``) are exactly the records
the payload models give, and the fast path is never looser than the models: whatever it takes, the model accepts too."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest
from pydantic import ValidationError

from p2w_rt.schemas import (
    CURRENT_VERSIONS,
    Action,
    ChainedEvent,
    HistoryRetrieval,
    LlmCall,
    MemoryEntry,
    Observation,
    ParsedAction,
    Rationale,
    RetrievalHit,
    StoredEvent,
    canonical_json,
)
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import LlmCallDetail, Trajectory, load_trajectories, load_trajectory, project
from p2w_runtime.domain.trajectory._decode import FAST_RECORDS, decode_record
from p2w_runtime.domain.trajectory._project import _Fold
from p2w_runtime.store import MemoryEventStore, import_bundle
from p2w_runtime.testing.episodes import EpisodeBuilder

FAST_TYPES = {"observation", "rationale", "action", "history.retrieval", "llm.call"}


async def test_records_from_text_equal_the_payload_path_on_the_recorded_example_runs() -> None:
    async with MemoryEventStore() as store:
        runs = [(await import_bundle(store, bundle)).run_id for bundle in example_run_bundles()]
        taken: dict[str, int] = dict.fromkeys(FAST_TYPES, 0)
        episodes = 0
        for run_id in runs:
            loaded = {t.stream: t async for t in load_trajectories(store, run_id)}
            for ref in await episodes_of(store, run_id):
                stored = [event async for event in store.read_stream(ref.stream)]
                assert loaded[ref.stream] == project([event.decode() for event in stored])
                for event in stored:
                    if event.type in FAST_TYPES:
                        assert decode_record(event) is not None, event.type  # the fast path took every one
                        taken[event.type] += 1
                episodes += 1
    assert episodes == 48
    assert all(count > 0 for count in taken.values()), taken


async def test_a_detailed_read_keeps_each_event_time_and_each_call_request_as_recorded() -> None:
    """What an OpenTelemetry export reads beside the records: the same by the text path and the payload path."""
    async with MemoryEventStore() as store:
        run_id = (await import_bundle(store, example_run_bundles()[0])).run_id
        calls = retrievals = 0
        for ref in await episodes_of(store, run_id):
            stored = [event async for event in store.read_stream(ref.stream)]
            t = await load_trajectory(store, ref.stream, detailed=True)
            assert t == project([event.decode() for event in stored], detailed=True)
            assert [t.started_at, *t.recorded_at] == [event.recorded_at for event in stored]
            for event in stored:
                if isinstance(p := event.decode_payload(), LlmCall):
                    assert t.call_details[event.event_id] == LlmCallDetail(p.messages, p.latency_s, p.params)
                    calls += 1
                elif isinstance(p, HistoryRetrieval):
                    entries = [hit.entry.model_dump(mode="json") for hit in p.hits]
                    assert t.retrieved_entries[event.event_id] == entries
                    retrievals += 1
            plain = await load_trajectory(store, ref.stream)
            assert plain.started_at is None and not plain.recorded_at and not plain.call_details
            assert not plain.retrieved_entries
        assert calls > 0 and retrievals > 0


def test_a_detailed_read_keeps_the_extra_keys_a_bank_gave_a_retrieved_entry() -> None:
    started = _started()
    (hit,) = VALID["history.retrieval"]["hits"]
    payload = {**VALID["history.retrieval"], "hits": [{**hit, "entry": {**hit["entry"], "category": "shoes"}}]}
    version = CURRENT_VERSIONS["history.retrieval"]
    text = canonical_json(payload).decode()
    event = StoredEvent("e-2", started.stream, 2, None, "history.retrieval", version, started.recorded_at, None,
                        text, [], started.hash, "h2")  # fmt: skip
    fold = _Fold(detailed=True)
    fold.apply_stored(started)
    fold.apply_stored(event)
    assert fold.trajectory is not None
    (entry,) = fold.trajectory.retrieved_entries["e-2"]
    assert entry["category"] == "shoes" and list(entry)[:4] == ["timestamp", "type", "object", "website"]


def test_a_call_whose_detail_the_text_path_refuses_gets_it_from_its_payload_model() -> None:
    """A latency the payload model reads leniently (a numeric string) is not lost to a detailed read."""
    started = _started()
    text = canonical_json({**VALID["llm.call"], "latency_s": "0.5"}).decode()
    version = CURRENT_VERSIONS["llm.call"]
    event = StoredEvent("e-2", started.stream, 2, None, "llm.call", version, started.recorded_at, None, text, [],
                        started.hash, "h2")  # fmt: skip
    assert decode_record(event) is not None  # the record itself is read from the text
    fold = _Fold(detailed=True)
    fold.apply_stored(started)
    fold.apply_stored(event)
    assert fold.trajectory is not None
    assert fold.trajectory.call_details["e-2"] == LlmCallDetail([{"role": "user", "content": "x"}], 0.5, {})


def _started() -> StoredEvent:
    builder = EpisodeBuilder("run1", "Alex_Garcia_A1", query="find chinos")
    return builder.sealed()[0]


def _chained(started: StoredEvent, kind: str, text: str, event_id: str = "e-2") -> ChainedEvent:
    return ChainedEvent(started.stream, 2, kind, CURRENT_VERSIONS[kind], None, event_id, started.hash, "h2", text)


def _fold_both(started: StoredEvent, event: ChainedEvent) -> tuple[Trajectory | Exception, Trajectory | Exception]:
    """The trajectory after ``event`` by the fast path and by the payload model (or what each raised)."""
    results: list[Trajectory | Exception] = []
    for fast in (True, False):
        fold = _Fold()
        fold.apply_stored(started)
        try:
            if fast:
                fold.apply_stored(event)
            else:
                fold.apply(event, event.decode_payload())
        except (ValidationError, ValueError) as exc:
            results.append(exc)
            continue
        assert fold.trajectory is not None
        results.append(fold.trajectory)
    return results[0], results[1]


VALID: dict[str, dict[str, Any]] = {
    "observation": Observation(
        step=1, url="https://a.example/", title="A", description="d", ax_tree="ab" * 32
    ).model_dump(mode="json"),
    "rationale": Rationale(step=2, source="generator", text="t", cited_entry_ids=[3, 4]).model_dump(mode="json"),
    "action": Action(
        step=3, raw="click [7]", parsed=ParsedAction(name="click", args=["7"]), status="executed"
    ).model_dump(mode="json"),
    "llm.call": LlmCall(
        role="planner",
        model="m",
        messages=[{"role": "user", "content": "x"}],
        latency_s=0.5,
        fingerprint="f",
        ordinal=0,
        cost_usd=0.25,
    ).model_dump(mode="json"),
    "history.retrieval": HistoryRetrieval(
        step=1,
        query="what size",
        model_id="m",
        index_hash="i",
        k=5,
        threshold=0.3,
        hits=[
            RetrievalHit(
                entry_id=4,
                rank=1,
                score=0.8,
                entry=MemoryEntry(timestamp="2024-01-02", type="purchase", object="chinos 32x32", website="kohls.com"),
            )
        ],
    ).model_dump(mode="json"),
}
HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    7,
    1.5,
    "",
    "x",
    "7",
    "planner",
    "executed",
    [],
    ["x"],
    [1],
    {},
    {"a": 1},
]
NESTED_USAGE: list[Any] = [
    {"prompt_tokens": "1"},
    {"prompt_tokens": 1.5},
    {"completion_tokens": None},
    {"total_tokens": True},
    {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    {"prompt_tokens": 1, "extra": 2},
]
NESTED_PARSED: list[Any] = [
    {"name": 1},
    {"name": "x", "args": [1]},
    {"name": "x", "args": "7"},
    {"name": "x", "extra": 1},
    {"args": ["7"]},
    {"name": "x"},
]


def _nested_hits() -> list[Any]:
    """``hits`` values with one field of the hit, or of its entry, set to each hostile value, left out, or added."""
    (hit,) = VALID["history.retrieval"]["hits"]
    variants: list[dict[str, Any]] = [{**hit, "extra": 1}, {**hit, "entry": {**hit["entry"], "extra": 1}}]
    for name in hit:
        variants += [{**hit, name: value} for value in HOSTILE] + [{k: v for k, v in hit.items() if k != name}]
    for name in hit["entry"]:
        entries = [{**hit["entry"], name: value} for value in HOSTILE]
        entries.append({k: v for k, v in hit["entry"].items() if k != name})
        variants += [{**hit, "entry": entry} for entry in entries]
    return [[variant] for variant in variants] + [[hit, hit], [hit, None]]


def _cases() -> list[tuple[str, str]]:
    """(type, payload text): every kept field of every fast type set to each hostile value, or left out."""
    cases = []
    for kind, valid in VALID.items():
        cases.append((kind, canonical_json(valid).decode()))
        for name in (field.name for field in msgspec.structs.fields(FAST_RECORDS[kind]) if field.name != "event_id"):
            nested = {"parsed": NESTED_PARSED, "hits": _nested_hits(), "usage": NESTED_USAGE}.get(name, [])
            for value in [*HOSTILE, *nested]:
                cases.append((kind, canonical_json({**valid, name: value}).decode()))
            cases.append((kind, canonical_json({k: v for k, v in valid.items() if k != name}).decode()))
    llm = canonical_json(VALID["llm.call"]).decode()
    cases += [("llm.call", llm.replace('"cost_usd":0.25', '"cost_usd":1e999')), ("observation", "{}"), ("action", "[]")]
    return cases


@pytest.mark.parametrize(("kind", "text"), _cases())
def test_on_the_fields_it_keeps_the_fast_path_agrees_with_the_payload_model(kind: str, text: str) -> None:
    started = _started()
    fast, model = _fold_both(started, _chained(started, kind, text))
    if isinstance(model, Exception):
        assert isinstance(fast, Exception), f"the fast path took a payload its model refuses: {text}"
        assert type(fast) is type(model)  # refused by the payload model, with its error
    else:
        assert fast == model


@pytest.mark.parametrize("kind", sorted(VALID))
def test_fields_a_trajectory_does_not_keep_are_left_unchecked_by_the_fast_path(kind: str) -> None:
    """The decision this pins (docs/design/projection.md): reading a trajectory checks what it keeps; a field
    it does not keep, or a key no model knows, is ignored there and reported by ``verify``."""
    started = _started()
    kept = {field.name for field in msgspec.structs.fields(FAST_RECORDS[kind])}
    valid = _fold_both(started, _chained(started, kind, canonical_json(VALID[kind]).decode()))[0]
    for name in [*(set(VALID[kind]) - kept - {"type"}), "unknown"]:
        text = canonical_json({**VALID[kind], name: [[[]]]}).decode()
        fast, model = _fold_both(started, _chained(started, kind, text))
        assert isinstance(model, ValidationError), name
        assert isinstance(fast, Trajectory) and fast == valid, name


def test_the_valid_payloads_do_take_the_fast_path() -> None:
    started = _started()
    for kind, valid in VALID.items():
        record = decode_record(_chained(started, kind, canonical_json(valid).decode(), event_id="e-9"))
        assert record is not None and record.event_id == "e-9", kind


@pytest.mark.parametrize("event_id", ['e"2', "e\\2", 'x","step":99,"url":"https://forged/'])
def test_an_event_id_that_json_would_read_differently_takes_the_payload_path(event_id: str) -> None:
    started = _started()
    event = _chained(started, "observation", canonical_json(VALID["observation"]).decode(), event_id=event_id)
    assert decode_record(event) is None
    fast, model = _fold_both(started, event)
    assert isinstance(fast, Trajectory) and fast == model
    assert [(o.event_id, o.step, o.url) for o in fast.observations] == [(event_id, 1, "https://a.example/")]


def test_a_payload_carrying_its_own_event_id_cannot_rename_its_record() -> None:
    started = _started()
    text = orjson.dumps({**VALID["rationale"], "event_id": "forged"}).decode()
    record = decode_record(_chained(started, "rationale", text, event_id="e-real"))
    assert record is None or record.event_id == "e-real"


def test_an_older_schema_version_takes_the_payload_path() -> None:
    started = _started()
    current = _chained(started, "observation", canonical_json(VALID["observation"]).decode())
    assert decode_record(current) is not None
    assert decode_record(current._replace(schema_version=current.schema_version - 1)) is None
