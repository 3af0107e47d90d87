"""Hostile recorded text (rich markup, ESC sequences, NUL, newlines, bidi overrides, very long ids) printed by every
text view: through click's CliRunner and through a real process writing to a pipe."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_cli.render.terminal import cell, markup, safe
from p2w_rt.cli import main
from p2w_runtime.store import open_store
from tests.helpers.classify_builders import act_well, add_run, ask_well, builder
from tests.helpers.paths import REPO

MARKUP = "[bold red]evil[/]"
ESC = "\x1b]0;pwned\x07\x1b[2J"
HOSTILE = f"{MARKUP} {ESC} nul\x00 two\nlines \u202erev"
HOSTILE_SHOWN = "[bold red]evil[/] \\x1b]0;pwned\\x07\\x1b[2J nul\\x00 two\\nlines \\u202erev"
LONG_ID = "run-" + "0123456789abcdef" * 12
RAW_CONTROLS = ("\x1b", "\x00", "\x07", "\u202e")


def _hostile_episode(run_id: str, *, size: str = "32x32", shade: str = "red"):
    b = builder(run_id, "Alex_Garcia_A1")
    ask_well(b)
    # step 0: act_well observes and acts from step 1 on, and a step's observation comes before its actions
    b.observation(0, "https://www.zocdoc.com/", f"Zocdoc {ESC}")
    b.planner(0, f"LLM says {MARKUP} and {ESC}")
    b.action(0, "type", "12", "zocdoc", "1")
    b.action(0, "goto", f"http://example.com/[x]?q=[{shade}]a[/{shade}]")
    act_well(b, size=size)
    return b


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("hostile") / "h.db"

    async def make() -> None:
        async with open_store(db, create=True) as store:
            await add_run(store, HOSTILE, [_hostile_episode(LONG_ID)], run_id=LONG_ID, model=f"gpt{MARKUP}\x1b[31m")
            await add_run(store, "plain", [_hostile_episode("other", size="34x30", shade="blue")], run_id="other")

    asyncio.run(make())
    for ref in (LONG_ID, "other"):
        result = CliRunner().invoke(main, ["--db", str(db), "replay", ref, "--judge", "rubric-rules"])
        assert result.exit_code == 0, result.output
    return db


def invoke(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def assert_safe(output: str) -> None:
    for raw in RAW_CONTROLS:
        assert raw not in output, f"raw {raw!r} reached the terminal"


GOTO = "goto [http://example.com/[x]?q=[red]a[/red]]"
VIEWS = {
    "runs": (("runs",), LONG_ID, MARKUP),
    "show RUN": (("show", LONG_ID), LONG_ID, MARKUP),
    "show RUN TASK": (("show", LONG_ID, "Alex_Garcia_A1"), LONG_ID, GOTO),
    "metrics": (("metrics", LONG_ID, "--by", "run,model"), HOSTILE_SHOWN, MARKUP),
    "classify --summary": (("classify", LONG_ID, "--summary", "--group-by", "run"), HOSTILE_SHOWN, MARKUP),
    "diff": (("diff", LONG_ID, "other"), LONG_ID, GOTO),
}
"""Each view, a long recorded string it must print whole on one line, and recorded markup it must print as is."""


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_prints_hostile_text_as_recorded_with_controls_spelled_out(hostile_db: Path, view: str) -> None:
    args, whole, literal = VIEWS[view]
    result = invoke(hostile_db, *args)
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    assert literal in result.output, "markup in recorded text was interpreted instead of printed"
    assert any(whole in line for line in result.output.splitlines()), f"{whole[:20]}... was cut or wrapped"


def test_runs_and_show_keep_the_label_whole_on_one_line(hostile_db: Path) -> None:
    runs = invoke(hostile_db, "runs").stdout
    assert HOSTILE_SHOWN in runs
    line = next(line for line in runs.splitlines() if LONG_ID in line)
    assert HOSTILE_SHOWN in line and "gpt[bold red]evil[/]\\x1b[31m" in line
    header = invoke(hostile_db, "show", LONG_ID).stdout.splitlines()[0]
    assert header.startswith(HOSTILE_SHOWN) and LONG_ID in header


def test_show_task_prints_actions_titles_and_llm_output_exactly(hostile_db: Path) -> None:
    out = invoke(hostile_db, "show", LONG_ID, "Alex_Garcia_A1").stdout
    assert "executed: type [12] [zocdoc] [1]" in out
    assert f"executed: {GOTO}" in out
    assert "Zocdoc \\x1b]0;pwned\\x07\\x1b[2J" in out
    assert f"planner: LLM says {MARKUP} and \\x1b]0;pwned" in out


def test_metrics_keeps_the_hostile_model_name_in_its_cell(hostile_db: Path) -> None:
    out = invoke(hostile_db, "metrics", LONG_ID, "--by", "run,model").stdout
    assert "gpt[bold red]evil[/]\\x1b[31m" in out and HOSTILE_SHOWN in out


def test_an_error_naming_a_hostile_run_is_one_escaped_line(hostile_db: Path) -> None:
    result = CliRunner().invoke(main, ["--db", str(hostile_db), "show", f"missing {ESC}\nforged line"])
    assert result.exit_code != 0
    assert_safe(result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "\\x1b[2J\\nforged line" in lines[0]
    assert "Traceback" not in result.output


def test_a_real_process_writing_to_a_pipe_is_not_cut_at_80_columns(hostile_db: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80", "TERM": "xterm-256color"}
    base = [sys.executable, "-c", "from p2w_rt.cli import main; main()", "--db", str(hostile_db)]
    base += ["--log-file", str(tmp_path / "log.jsonl")]
    for view in ("runs", "show RUN", "show RUN TASK", "diff"):
        args, whole, literal = VIEWS[view]
        done = subprocess.run([*base, *args], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert_safe(done.stdout + done.stderr)
        assert any(whole in line for line in done.stdout.splitlines()), f"{view}: the run id was cut"
        assert literal in done.stdout
    shown = subprocess.run(
        [*base, "show", LONG_ID, "Alex_Garcia_A1"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    ).stdout
    assert "executed: type [12] [zocdoc] [1]" in shown
    assert max(len(line) for line in shown.splitlines()) > 80
    missing = subprocess.run(
        [*base, "show", f"nope {ESC}"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert missing.returncode != 0 and missing.stderr.startswith("error: ") and "\\x1b[2J" in missing.stderr
    assert_safe(missing.stderr)


def test_safe_spells_out_every_control_character_and_keeps_brackets() -> None:
    assert safe(HOSTILE) == HOSTILE_SHOWN
    assert safe("tab\there\r\x7f\x85\u2028") == "tab\\there\\r\\x7f\\x85\\u2028"
    assert safe("ümlaut 東京 [12] C:\\path") == "ümlaut 東京 [12] C:\\path"
    assert cell(MARKUP).plain == MARKUP
    assert markup("ends with \\").endswith("\\\\")


def test_an_unbalanced_closing_tag_in_a_label_prints_instead_of_failing(tmp_path: Path) -> None:
    db = tmp_path / "tag.db"

    async def make() -> None:
        async with open_store(db, create=True) as store:
            await add_run(store, "oops [/] label", [_hostile_episode("tag")], run_id="tag")

    asyncio.run(make())
    result = invoke(db, "show", "tag", "Alex_Garcia_A1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("oops [/] label tag")


def test_console_log_lines_spell_out_control_characters_and_the_log_file_keeps_them(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    script = (
        "import structlog; from p2w_runtime.logs import configure_logging; "
        f"configure_logging(log_file=__import__('pathlib').Path({str(log)!r})); "
        "structlog.get_logger('t').warning('blocked on \\x1b]0;x\\x07', title='evil \\x1b[2J\\nforged')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert_safe(done.stderr)
    assert "blocked on \\x1b]0;x\\x07" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    logged = json.loads(log.read_text(encoding="utf-8"))
    assert logged["event"] == "blocked on \x1b]0;x\x07" and logged["title"] == "evil \x1b[2J\nforged"


@pytest.mark.parametrize(
    "line",
    [
        "cached Persona0001_A1  rubric-rules  p_web=1.000  intent=0.500  [green]success[/]",
        f"failed {markup(HOSTILE)}: [red]{markup(LONG_ID)}[/] :thumbs_up: \\[not markup]",
        "a tab\there, kept as rich expands it",
        "",
    ],
)
def test_a_line_printed_fast_where_nothing_styles_it_is_the_line_rich_prints(line: str) -> None:
    """``print_line`` writes a pass's per-episode line itself when the console has no color system (a pipe, a dumb
    terminal): byte for byte what ``Console.print`` writes there (markup, emoji codes, escapes, a tab), and on a
    console that styles text it is ``Console.print``."""
    from io import StringIO

    from rich.console import Console

    from p2w_cli.render.terminal import PIPE_WIDTH, print_line

    for options in ({"width": PIPE_WIDTH}, {"width": 80, "force_terminal": True, "color_system": "truecolor"}):
        fast, rich_print = StringIO(), StringIO()
        print_line(Console(file=fast, highlight=False, soft_wrap=True, **options), line)  # type: ignore[arg-type]
        Console(file=rich_print, highlight=False, soft_wrap=True, **options).print(line, highlight=False)  # type: ignore[arg-type]
        assert fast.getvalue() == rich_print.getvalue()
        assert ("\x1b[" in fast.getvalue()) == ("force_terminal" in options and "[/]" in line)  # styled there only
