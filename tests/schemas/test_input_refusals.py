"""Inputs that once went in and should not: a memory-bank timestamp that is no date, numbers JSON has not
(``NaN``, ``Infinity``, ``1e400``) in trajectories, memory banks and labels, a lone surrogate in a task file or a
memory bank, an annotator name with a newline or an escape character, a label made only of whitespace, a FIFO
given as an input file.

Each runs the real command on a real file in ``tmp_path`` and expects one line naming the file and the field,
exit 1, and the database holding the same events as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_runtime.data import BadValue, load_memory_bank, parse_json
from p2w_runtime.demo.examples import example_paths, example_run_bundles
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite

EXAMPLES = example_paths()
AGENTOCCAM = "p2w-agentoccam"
BROWSER_USE = "p2w-browser-use"
TASK = "Lena_Fischer_A1"
"""A counted episode of the bundled example run ``earlier``."""


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding the example run ``earlier``, as ``p2w-rt import`` leaves it."""
    db = tmp_path_factory.mktemp("recorded") / "runs.db"
    assert invoke(db, "import", str(example_run_bundles()[0])).exit_code == 0
    return db


@pytest.fixture
def db(recorded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(recorded, tmp_path / "runs.db"))


def events(db: Path) -> list[tuple[str, str]]:
    with raw_sqlite(db) as conn:
        return conn.execute("SELECT event_id, hash FROM events ORDER BY position").fetchall()


def refused(db: Path, *args: str) -> str:
    """Run the command; assert one line, exit 1, and the database's events unchanged. Returns the line."""
    before = events(db)
    result = invoke(db, *args)
    assert result.exit_code == 1, result.output
    assert len(result.output.splitlines()) == 1 and "Traceback" not in result.output, result.output
    assert events(db) == before
    return result.output.rstrip("\n")


def import_trajectories(db: Path, fmt: str, paths: list[Path], history: Path = EXAMPLES.history_dir) -> list[str]:
    args = ["import-trajectories", "--format", fmt, "--label", "spoiled", "--tasks", str(EXAMPLES.tasks_dir)]
    return [*args, "--history", str(history), *map(str, paths)]


# -- memory banks ------------------------------------------------------------------------------------------


def spoiled_history(tmp_path: Path, edit: str) -> tuple[Path, Path]:
    """The example memory banks, Jordan_Park's first entry's timestamp replaced by ``edit`` (raw JSON text)."""
    history = Path(shutil.copytree(EXAMPLES.history_dir, tmp_path / "history"))
    bank = history / "Jordan_Park.json"
    data = json.loads(bank.read_text())
    first = json.dumps(data["memory_bank"][0]["timestamp"])
    bank.write_text(bank.read_text().replace(first, edit, 1))
    return history, bank


def test_a_memory_bank_timestamp_that_is_not_a_date_is_refused(db: Path, tmp_path: Path) -> None:
    history, bank = spoiled_history(tmp_path, '"yesterday"')
    expected = (
        f"{bank}: entry memory_bank[0]: timestamp: 'yesterday' is not an ISO 8601 date or date-time "
        "(2024-01-31, 2024-01-31T10:26:18)"
    )
    # the importer names the trajectory that needed the bank, then the bank's own line
    assert expected in refused(db, *import_trajectories(db, AGENTOCCAM, EXAMPLES.trajectories(AGENTOCCAM), history))
    assert refused(db, "history", "search", "--history", str(history), "Jordan_Park", "shoes") == f"error: {expected}"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "9" * 5000])
def test_a_number_json_has_not_in_a_memory_bank_is_refused(db: Path, tmp_path: Path, number: str) -> None:
    history, bank = spoiled_history(tmp_path, f'"2024-01-01", "rating": {number}')
    message = refused(db, *import_trajectories(db, AGENTOCCAM, EXAMPLES.trajectories(AGENTOCCAM), history))
    assert (
        f"{bank}: field memory_bank[0].rating: " in message
        and message.endswith("is not a finite number")
        and ("NaN" if number == "NaN" else "Infinity") in message
    )


def test_a_lone_surrogate_in_a_memory_bank_is_refused(db: Path, tmp_path: Path) -> None:
    """``json.loads`` takes the escape; orjson then failed to hash the retrieval that quoted the entry."""
    history, bank = spoiled_history(tmp_path, '"2024-01-01", "note": "x\\ud800"')
    message = refused(db, *import_trajectories(db, AGENTOCCAM, EXAMPLES.trajectories(AGENTOCCAM), history))
    assert message.endswith(
        f"{bank}: field memory_bank[0].note: lone surrogate '\\ud800' at character 1; not valid Unicode"
    )


def test_a_surrogate_pair_is_text_and_a_lone_one_in_a_key_is_named() -> None:
    """``json.dumps`` writes an emoji as a pair of escapes: that is text. A key is checked like a value."""
    assert parse_json('{"a": ["\\ud83d\\ude00"]}') == {"a": ["\U0001f600"]}
    with pytest.raises(BadValue) as caught:
        parse_json('{"a": [{"ok": 1, "b\\udc00": 2}]}')
    assert str(caught.value) == "field a[0].b\\udc00: lone surrogate '\\udc00' at character 1; not valid Unicode"


# -- task files --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ('"Find \\udfff shoes"', "lone surrogate '\\udfff' at character 5; not valid Unicode"),
        ("9" * 5000, "Infinity (or a number too large for a float) is not a finite number"),
    ],
    ids=["surrogate", "digits"],
)
def test_a_task_file_holding_what_the_store_cannot_is_refused(
    db: Path, tmp_path: Path, value: str, reason: str
) -> None:
    """A lone surrogate in a task's intent was a ``TypeError`` traceback when ``episode.started`` was hashed."""
    tasks = Path(shutil.copytree(EXAMPLES.tasks_dir, tmp_path / "tasks"))
    task = tasks / "personalization_1" / "Jordan_Park_A1.json"
    data = json.loads(task.read_text())
    task.write_text(json.dumps({**data, "intent": "@"}).replace('"@"', value))
    args = import_trajectories(db, AGENTOCCAM, EXAMPLES.trajectories(AGENTOCCAM))
    args[args.index("--tasks") + 1] = str(tasks)
    assert refused(db, *args) == f"error: {task}: field intent: {reason}"


@pytest.mark.parametrize(
    "stamp", ["2024-01-31", "2024-01-31 10:26", "2024-01-31T10:26:18Z", "2024-01-31T10:26:18+02:00"]
)
def test_dates_as_banks_write_them_still_load(tmp_path: Path, stamp: str) -> None:
    _, bank = spoiled_history(tmp_path, json.dumps(stamp))
    assert load_memory_bank(bank)[0].timestamp == stamp


# -- trajectories ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "field", "number"),
    [
        (AGENTOCCAM, "trajectory[0].reward", "NaN"),
        (AGENTOCCAM, "trajectory[1].success", "Infinity"),
        (BROWSER_USE, "[0].step", "-Infinity"),
        (BROWSER_USE, "[1].step", "1e400"),
        (BROWSER_USE, "[1].step", "9" * 5000),  # more digits than int() converts
    ],
)
def test_a_number_json_has_not_in_a_trajectory_is_refused(
    db: Path, tmp_path: Path, fmt: str, field: str, number: str
) -> None:
    source = EXAMPLES.trajectories(fmt)[0]
    data = json.loads(source.read_text())
    steps = data["trajectory"] if fmt == AGENTOCCAM else data
    index, name = int(field.split("[")[1].split("]")[0]), field.rsplit(".", 1)[1]
    steps[index][name] = "__HERE__"
    path = tmp_path / source.name
    path.write_text(json.dumps(data).replace('"__HERE__"', number))
    message = refused(db, *import_trajectories(db, fmt, [path]))
    spelled = {"NaN": "NaN", "-Infinity": "-Infinity"}.get(number, "Infinity")
    reason = spelled if spelled == "NaN" else f"{spelled} (or a number too large for a float)"
    assert message.startswith("error: 1 bad trajectory file (--skip-bad imports the rest): ")
    assert message.endswith(f"{path}: field {field}: {reason} is not a finite number")
    assert "spoiled" not in invoke(db, "runs").output


# -- human labels ------------------------------------------------------------------------------------------

HEADER = "run,task,point,label,annotator"


def jsonl(**changes: object) -> str:
    row = {"run": "earlier", "task": TASK, "point": "success", "label": 1, "annotator": "ann"} | changes
    return json.dumps(row)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("nan.jsonl", jsonl(label="@").replace('"@"', "NaN"), ":1: field 'label': NaN is not a finite number"),
        ("inf.jsonl", jsonl(max="@").replace('"@"', "Infinity"), ":1: field 'max': Infinity (or a number too large"),
        ("big.jsonl", jsonl(max="@").replace('"@"', "1e400"), ":1: field 'max': Infinity (or a number too large"),
        ("inf.csv", f"{HEADER},max\nearlier,{TASK},success,1,ann,inf\n", ":2: field 'max': 'inf' is not a finite"),
        ("newline.jsonl", jsonl(annotator="ann\nlee"), ":1: field 'annotator': 'ann\\nlee' holds the control"),
        ("newline.csv", f'{HEADER}\nearlier,{TASK},success,1,"ann\nlee"\n', ":2: field 'annotator': 'ann\\nlee'"),
        ("escape.jsonl", jsonl(annotator="ann\x1b[31m"), ":1: field 'annotator': 'ann\\x1b[31m' holds the control"),
        ("bidi.csv", f"{HEADER}\nearlier,{TASK},success,1,ann\u202elee\n", "holds the control character U+202E"),
        ("at.jsonl", jsonl(annotator="ann@lab.org"), ":1: field 'annotator': 'ann@lab.org' holds '@'"),
        ("blank.jsonl", jsonl(label="  \t "), ":1: field 'label' is only whitespace"),
        ("blank.csv", f"{HEADER}\nearlier,{TASK},success,   ,ann\n", ":2: field 'label' is only whitespace"),
        ("blank-point.csv", f"{HEADER}\nearlier,{TASK},\u3000,1,ann\n", ":2: field 'point' is only whitespace"),
        ("wide.jsonl", jsonl(label="@").replace('"@"', "1" + "0" * 400), ":1: field 'label': 1000"),
        ("digits.jsonl", jsonl(label="@").replace('"@"', "9" * 5000), ":1: field 'label': Infinity (or a number"),
        ("long.csv", f"{HEADER}\nearlier,{TASK},{'x' * 140_000},1,ann\n", ":2: not CSV (field larger than"),
    ],
)
def test_bad_labels_are_refused_naming_file_and_field(
    db: Path, tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(text + "\n", encoding="utf-8")
    message = refused(db, "import-labels", str(path))
    assert message.startswith(f"error: {path}:") and expected in message, message


@pytest.mark.parametrize("name", ["bom.csv", "bom.jsonl"])
def test_a_label_file_starting_with_a_byte_order_mark_imports(db: Path, tmp_path: Path, name: str) -> None:
    path = tmp_path / name  # Excel's "CSV UTF-8" starts the file with U+FEFF
    row = f"{HEADER}\nearlier,{TASK},success,yes,ann\n" if name.endswith(".csv") else jsonl() + "\n"
    path.write_text(row, encoding="utf-8-sig")
    result = invoke(db, "import-labels", str(path))
    assert result.exit_code == 0 and result.output == "1 labels: 1 judgments written, 0 already there\n"


def test_a_clean_annotator_with_spaces_still_imports(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_text(f"{HEADER}\nearlier,{TASK},success,yes,Ann Lee\n")
    result = invoke(db, "import-labels", str(path))
    assert result.exit_code == 0 and result.output == "1 labels: 1 judgments written, 0 already there\n"


# -- files that are no regular file -----------------------------------------------------------------------

PROFILES = REPO / "p2w_runtime" / "demo" / "sites" / "agenticshop" / "demo_user_profile.json"
CURATION = [{"user": "DEMO-RAIN-COMMUTER", "search_results": []}]


@contextlib.contextmanager
def fifo(path: Path, text: str) -> Iterator[Path]:
    """A FIFO with a writer sending ``text`` to every reader: a command that opens it (as often as it does) gets the
    text and ends, instead of hanging."""
    os.mkfifo(path)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            with contextlib.suppress(BrokenPipeError), path.open("w") as pipe:
                pipe.write(text)

    writer = threading.Thread(target=serve, daemon=True)
    writer.start()
    yield path
    done.set()
    os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # the writer's open returns, and it stops
    writer.join(5)


@pytest.mark.parametrize(
    ("name", "text", "command", "refusal"),
    [
        ("on_gpt41_Jordan_Park_B2.json", "[]", import_trajectories(Path(), BROWSER_USE, [Path("@")]),
         "not a regular file or a folder"),
        ("out.json", json.dumps(CURATION), ["import-curation", "@", "--profiles", str(PROFILES), "--label", "piped"],
         "not a regular file"),
        ("demo_user_profile.json", "[]", ["import-curation", "results.json", "--profiles", "@", "--label", "piped"],
         "not a regular file"),
        ("labels.jsonl", jsonl(), ["import-labels", "@"], "not a regular file"),
    ],
    ids=["import-trajectories", "import-curation", "import-curation-profiles", "import-labels"],
)  # fmt: skip
def test_a_fifo_given_as_a_file_is_refused_unopened(
    db: Path, tmp_path: Path, name: str, text: str, command: list[str], refusal: str
) -> None:
    """Opening a FIFO waits for a writer: given as a file (``@`` above), one hung the command for good. Here a
    writer waits, so that a command opening it fails this test instead of hanging it."""
    (tmp_path / "results.json").write_text(json.dumps(CURATION))
    with fifo(tmp_path / name, text) as path:
        message = refused(
            db, *(str(path) if a == "@" else str(tmp_path / a) if a == "results.json" else a for a in command)
        )
    assert message.endswith(f"{path}: {refusal}")


# -- run labels --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "why"),
    [("   ", "is only whitespace"), ("\t", "is only whitespace"), ("nightly\nrun", "control character U+000A"),
     ("a\x1b[31mred", "control character U+001B")],
)  # fmt: skip
@pytest.mark.parametrize(
    "command",
    [
        ["import-trajectories", "--examples", "--format", AGENTOCCAM, "--label"],
        ["record", "--tasks", str(EXAMPLES.tasks_dir), "--history", str(EXAMPLES.history_dir), "--label"],
        ["fork", "earlier", TASK, "--at-step", "2", "--label"],
        ["rerun", "earlier", "--record-as"],
    ],
    ids=["import-trajectories", "record", "fork", "rerun"],
)
def test_a_run_label_of_whitespace_or_control_characters_is_refused(
    db: Path, command: list[str], label: str, why: str
) -> None:
    """Every option that names a new run refuses it before anything runs: the option named, the database as it was."""
    before = events(db)
    result = invoke(db, *command, label)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"Invalid value for '{command[-1]}'" in result.output and why in result.output
    assert events(db) == before
