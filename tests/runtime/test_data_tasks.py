"""Task files and ground truth, on all 450 published Persona2Web tasks and on the messy cases among them."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from p2w_rt.schemas import GroundTruth, Location
from p2w_runtime.data import DataError, TaskSet, ground_truth, load_tasks
from p2w_runtime.data._ground_truth import parse_location
from p2w_runtime.data._tasks import load_task
from p2w_runtime.demo.examples import example_paths
from tests.helpers.paths import DATA

REAL_TASKS = DATA / "persona2web" / "tasks"


@pytest.fixture(scope="module")
def real() -> TaskSet:
    return load_tasks(REAL_TASKS)


def truth(tasks: TaskSet, query_set: str) -> GroundTruth:
    return tasks.ground_truths[query_set]


def test_all_450_real_tasks_load_into_150_query_sets_with_ground_truth(real: TaskSet) -> None:
    assert len(real) == 450
    assert len(real.query_sets) == 150
    assert len(real.ground_truths) == 150
    assert all(len(group) == 3 and [t.level for t in group] == [0, 1, 2] for group in real.query_sets.values())
    assert all(task.ground_truth == real.ground_truths[task.query_set] for task in real)
    assert Counter(len(g.preferences) for g in real.ground_truths.values()) == {2: 118, 3: 21, 4: 6, 1: 4, 6: 1}
    assert sum(g.location is None for g in real.ground_truths.values()) == 14


def test_folders_give_levels_and_ids_give_persona_and_query_set(real: TaskSet) -> None:
    task = real.get("Alex_Garcia_A1")
    assert (task.level, task.persona, task.query_set) == (2, "Alex_Garcia", "Alex_Garcia_A")
    assert task.path == REAL_TASKS / "personalization_1" / "Alex_Garcia_A1.json"
    assert task.intent.startswith("Find men's slim-fit chinos in my usual waist/inseam")
    assert task.file.intent == "Query: " + task.intent
    assert task.start_url == "https://www.bing.com/"
    assert real.get("Alex_Garcia_A2").level == 1
    assert real.get("Alex_Garcia_A3").level == 0


def test_plain_level0_query(real: TaskSet) -> None:
    assert truth(real, "Alex_Garcia_A") == GroundTruth(
        website="kohls.com",
        websites=["kohls.com"],
        preferences=["32x32", "visible ratings 4.2+ stars with 50+ reviews"],
        location=Location(city="Los Angeles", state="CA", zip="90210", raw="Los Angeles, CA 90210"),
    )


def test_alternative_websites_are_listed_and_the_text_kept(real: TaskSet) -> None:
    assert truth(real, "Avery_Davis_C").website == "indeed.com or linkedin.com"
    assert truth(real, "Avery_Davis_C").websites == ["indeed.com", "linkedin.com"]
    assert truth(real, "Parker_Jones_C").websites == ["coursera.org.com", "udemy.com"]
    assert truth(real, "Casey_Williams_B").websites == ["Google.com", "Map.com"]


def test_typos_are_kept_as_written(real: TaskSet) -> None:
    assert truth(real, "Alex_Garcia_C").websites == ["coursera.org.com"]
    assert truth(real, "Blake_Thomas_C").website == "craigslist.org.com"
    assert truth(real, "Dakota_Taylor_A").website == "Google Flights.com"


def test_bold_counts_from_one_to_six(real: TaskSet) -> None:
    assert truth(real, "Logan_Jones_B").preferences == ["two"]
    assert truth(real, "Drew_Moore_B").preferences == [
        "Foo Fighters",
        "1990s–2000s",
        "4.0+ rating",
        "under $20",
        "Good+ or better",
        "shipping under $5",
    ]
    assert truth(real, "Taylor_Clark_B").preferences == [
        "Hilton Columbus Downtown, Hyatt Regency Columbus",
        "$120-$180",
    ]


def test_no_trailing_location(real: TaskSet) -> None:
    assert truth(real, "Blake_Moore_A").location is None
    # Parentheses inside a bold span are not a location.
    assert truth(real, "Dakota_Taylor_A").preferences[0] == "Denver International Airport (DEN)"
    assert truth(real, "Dakota_Taylor_A").location is None


def test_location_inside_bold_stays_a_preference_and_the_trailing_one_counts(real: TaskSet) -> None:
    gt = truth(real, "Parker_Jones_A")
    assert gt.preferences[-1] == "Phoenix, AZ 85001"
    assert gt.location == Location(city="Phoenix", state="AZ", zip="85001", raw="Phoenix, AZ 85001")


def test_state_spelled_out_and_multi_line_modified_query(real: TaskSet) -> None:
    assert truth(real, "Jessica_Thompson_A").location == Location(
        city="New York", state="New York", zip="10001", raw="New York, New York 10001"
    )
    gt = truth(real, "Jordan_Garcia_B")
    assert gt.preferences == [
        "tenure-track expectations",
        "remote teaching policies",
        "universities",
        "education nonprofits",
    ]
    assert gt.location is not None and gt.location.city == "Chicago"


def test_ground_truth_needs_the_at_site_convention() -> None:
    with pytest.raises(DataError, match="does not start with 'At <site>,'"):
        ground_truth("Find chinos in **32x32**")


def test_location_without_zip_needs_a_state_code() -> None:
    assert parse_location("find shoes (Seattle, WA)") == Location(
        city="Seattle", state="WA", zip=None, raw="Seattle, WA"
    )
    assert parse_location("find news (sports, weather)") is None
    assert parse_location("find news (Seattle, WA 98101) today") is None


def test_content_hash_ignores_layout_and_follows_content(tmp_path: Path) -> None:
    source = REAL_TASKS / "personalization_3" / "Alex_Garcia_A3.json"
    nested = tmp_path / "nested" / "personalization_3"
    nested.mkdir(parents=True)
    shutil.copy(source, nested)
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / source.name).write_text(json.dumps(json.loads(source.read_text()), indent=None))
    a, b = load_tasks(tmp_path / "nested"), load_tasks(flat)
    assert a.content_hash == b.content_hash and a.dataset_id == b.dataset_id
    assert a.dataset_id == f"persona2web@{a.content_hash[:12]}"
    data = json.loads(source.read_text())
    data["intent"] = data["intent"].replace("32x32", "34x32")
    (flat / source.name).write_text(json.dumps(data))
    assert load_tasks(flat).content_hash != a.content_hash


def test_flat_folder_takes_levels_from_the_id_digit(tmp_path: Path) -> None:
    for folder in ("personalization_1", "personalization_3"):
        for path in (REAL_TASKS / folder).glob("Alex_Lee_B*.json"):
            shutil.copy(path, tmp_path)
    tasks = load_tasks(tmp_path)
    assert {t.task_id: t.level for t in tasks} == {"Alex_Lee_B1": 2, "Alex_Lee_B3": 0}
    assert tasks.get("Alex_Lee_B1").ground_truth == tasks.get("Alex_Lee_B3").ground_truth is not None


def test_a_set_without_its_level0_task_has_no_ground_truth(tmp_path: Path) -> None:
    shutil.copy(REAL_TASKS / "personalization_1" / "Alex_Lee_B1.json", tmp_path)
    assert load_tasks(tmp_path).get("Alex_Lee_B1").ground_truth is None


def _task(tmp_path: Path, name: str, **changes: object) -> Path:
    data = json.loads((REAL_TASKS / "personalization_1" / "Alex_Garcia_A1.json").read_text())
    data.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not ...}))
    return path


def test_bad_task_files_name_the_file_and_field(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"x\.json: start_url: Field required"):
        load_task(_task(tmp_path, "x.json", start_url=...))
    with pytest.raises(DataError, match=r"y\.json: field task_id 'AlexGarcia' is not of the form"):
        load_task(_task(tmp_path, "y.json", task_id="AlexGarcia"))
    level0 = _task(tmp_path, "z.json", task_id="Alex_Garcia_A3", intent="Query: Find chinos")
    with pytest.raises(DataError, match=r"z\.json: field intent: level-0 intent does not start with 'At <site>,'"):
        load_task(level0)


def test_a_file_in_the_wrong_level_folder_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "personalization_3"
    folder.mkdir()
    shutil.copy(REAL_TASKS / "personalization_1" / "Alex_Garcia_A1.json", folder)
    with pytest.raises(DataError, match=r"'Alex_Garcia_A1' is level 2, its folder holds level 0"):
        load_tasks(tmp_path)


def test_duplicate_ids_and_unknown_ids(tmp_path: Path, real: TaskSet) -> None:
    _task(tmp_path, "one.json")
    _task(tmp_path, "two.json")
    with pytest.raises(DataError, match=r"two\.json: field task_id 'Alex_Garcia_A1' duplicates .*one\.json"):
        load_tasks(tmp_path)
    with pytest.raises(DataError, match=r"unknown task id 'Nobody_Here_A1' \(450 tasks in "):
        real.get("Nobody_Here_A1")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no task files"):
        load_tasks(empty)


def test_the_example_tasks_load_with_ground_truth() -> None:
    tasks = load_tasks(example_paths().tasks_dir)
    assert len(tasks) == 12 and len(tasks.ground_truths) == 4
    gt = tasks.ground_truths["Mina_Okafor_A"]
    assert gt.websites == ["seatgeek.com", "stubhub.com"]
    assert gt.preferences == ["Austin", "indie rock", "under $80"]
    assert tasks.ground_truths["Jordan_Park_B"].location is None
