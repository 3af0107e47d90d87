"""Memory-bank loading: accepted layouts, validation errors that name file/index/field, persona lookup, hashing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2w_rt.schemas import MemoryEntry
from p2w_runtime.data import DataError, find_memory_bank, list_personas, load_memory_bank, memory_bank_hash
from p2w_runtime.demo.examples import example_paths
from p2w_runtime.errors import UserError

ENTRIES = [
    {"timestamp": "2025-01-01T10:00:00", "type": "web search", "object": "trail shoes", "website": "google.com"},
    {"timestamp": "2025-01-02T10:00:00", "type": "purchase", "object": "Brooks Cascadia, 10.5", "website": "rei.com"},
    {"timestamp": "2025-01-03T10:00:00", "type": "booking", "object": "Dinner for 2", "website": "opentable.com"},
]


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.mark.parametrize("key", ["memory_bank", "entries", "memories", "items", None])
def test_every_accepted_layout_loads_entries_in_file_order(tmp_path: Path, key: str | None) -> None:
    bank = write(tmp_path / "Jo_Doe.json", ENTRIES if key is None else {"user": "Jo_Doe", key: ENTRIES})
    entries = load_memory_bank(bank)
    assert [e.object for e in entries] == ["trail shoes", "Brooks Cascadia, 10.5", "Dinner for 2"]
    assert entries[1] == MemoryEntry(**ENTRIES[1])
    assert entries[1].key_text() == "purchase: Brooks Cascadia, 10.5"


def test_an_entry_without_website_is_accepted_and_other_types_are_kept(tmp_path: Path) -> None:
    bank = write(tmp_path / "a.json", [{"timestamp": "2025-02-01", "type": "app usage", "object": "Strava run"}])
    assert load_memory_bank(bank) == [
        MemoryEntry(timestamp="2025-02-01", type="app usage", object="Strava run", website="")
    ]


def test_a_bad_entry_is_reported_by_file_index_and_field(tmp_path: Path) -> None:
    broken = [*ENTRIES, {"timestamp": "t", "type": "purchase"}]
    bank = write(tmp_path / "Jo_Doe.json", {"memory_bank": broken})
    with pytest.raises(DataError) as caught:
        load_memory_bank(bank)
    assert str(caught.value).startswith(f"{bank}: entry memory_bank[3]: object: Field required")


def test_an_empty_string_field_and_a_non_object_entry_are_rejected(tmp_path: Path) -> None:
    bank = write(tmp_path / "b.json", [ENTRIES[0], {**ENTRIES[1], "type": ""}])
    with pytest.raises(DataError, match=r"b\.json: entry \[1\]: type: String should have at least 1 character"):
        load_memory_bank(bank)
    bank = write(tmp_path / "c.json", {"entries": [ENTRIES[0], "purchase: shoes"]})
    with pytest.raises(DataError, match=r"c\.json: entry entries\[1\] must be an object, got str"):
        load_memory_bank(bank)


def test_an_empty_bank_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"e\.json: memory bank is empty"):
        load_memory_bank(write(tmp_path / "e.json", {"memory_bank": []}))


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    bank = tmp_path / "m.json"
    bank.write_text('{"memory_bank": [\n  {"timestamp": "t",, }\n]}', encoding="utf-8")
    with pytest.raises(DataError, match=r"m\.json: invalid JSON at line 2, column 21"):
        load_memory_bank(bank)


def test_wrong_top_level_shapes_are_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"expected a JSON object or list, got str"):
        load_memory_bank(write(tmp_path / "s.json", "entries"))
    with pytest.raises(DataError, match=r"no entry list; expected a top-level list or one of the keys memory_bank"):
        load_memory_bank(write(tmp_path / "k.json", {"history": ENTRIES}))
    with pytest.raises(DataError, match=r"field 'items' must be a list of entries, got dict"):
        load_memory_bank(write(tmp_path / "d.json", {"items": {"0": ENTRIES[0]}}))
    with pytest.raises(DataError, match=r"missing\.json: file not found"):
        load_memory_bank(tmp_path / "missing.json")


def test_data_errors_are_user_errors() -> None:
    assert issubclass(DataError, UserError) and issubclass(DataError, ValueError)


def test_personas_are_found_by_file_name(tmp_path: Path) -> None:
    for name in ("Zoe_Ng", "Ana_Lima"):
        write(tmp_path / f"{name}.json", ENTRIES)
    (tmp_path / "notes.txt").write_text("not a bank")
    assert list_personas(tmp_path) == ["Ana_Lima", "Zoe_Ng"]
    assert find_memory_bank(tmp_path, "Zoe_Ng") == tmp_path / "Zoe_Ng.json"
    with pytest.raises(DataError, match=r"no memory bank for persona 'Max_Roe' \(2 personas in "):
        find_memory_bank(tmp_path, "Max_Roe")
    with pytest.raises(DataError, match=r"history directory not found"):
        list_personas(tmp_path / "nope")


@pytest.mark.parametrize("persona", ["../outside/Zoe_Ng", "A" * 300])
def test_a_persona_that_is_no_file_name_of_the_folder_has_no_bank(tmp_path: Path, persona: str) -> None:
    """A path out of the folder is not followed, and a name too long for the file system is no traceback."""
    for folder in ("outside", "history"):
        (tmp_path / folder).mkdir()
    write(tmp_path / "outside" / "Zoe_Ng.json", ENTRIES)
    with pytest.raises(DataError, match="no memory bank for persona"):
        find_memory_bank(tmp_path / "history", persona)


def test_hash_follows_content_and_order_not_formatting(tmp_path: Path) -> None:
    compact = load_memory_bank(write(tmp_path / "a.json", ENTRIES))
    (tmp_path / "b.json").write_text(
        json.dumps({"memory_bank": [dict(reversed(e.items())) for e in ENTRIES]}, indent=4)
    )
    reformatted = load_memory_bank(tmp_path / "b.json")
    assert memory_bank_hash(compact) == memory_bank_hash(reformatted)
    assert len(memory_bank_hash(compact)) == 64
    assert memory_bank_hash(compact) != memory_bank_hash(list(reversed(compact)))
    changed = [*compact[:2], compact[2].model_copy(update={"object": "Dinner for 3"})]
    assert memory_bank_hash(compact) != memory_bank_hash(changed)


def test_the_example_banks_load() -> None:
    history = example_paths().history_dir
    personas = list_personas(history)
    assert personas == ["Jordan_Park", "Mina_Okafor", "Theo_Lindqvist"]
    for persona in personas:
        entries = load_memory_bank(find_memory_bank(history, persona))
        assert 30 <= len(entries) <= 60
        assert {e.type for e in entries} <= {"web search", "web visit", "purchase", "booking", "review and rating"}
