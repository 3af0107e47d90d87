"""A hint that names a run prints a command line that pastes into a shell as it reads: the label quoted
(``'my run'``, ``'a;b'``), and a label that starts with ``-`` after ``--``, where click reads it as the run and not
as an option. Each hint is parsed back by its own command's parser, and the one to judge is run as pasted."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_rt.replay.judges import read_judgments
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store
from tests.helpers.chinos_runs import TRUTH, build_runs

LABELS = ("my run", "a;b", "--x", "$(touch pwned)")
HINT = re.compile(r"(p2w-rt .*?)(?:`|\)$| re-executes| \(CMD|$)")
"""A hint's command line: from ``p2w-rt`` to the backquote, parenthesis or words the message closes it with."""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_runs(tmp_path / "p2w.db", [(label, TRUTH, True) for label in (*LABELS, "other")], agent="agentoccam")


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


SHELL_ECHO = "p2w-rt() { printf '%s\\0' p2w-rt \"$@\"; }; "
"""Bash with ``p2w-rt`` a function that prints the words it was given: what the pasted line would run."""


def pasted(stderr: str, where: Path) -> list[str]:
    """The words bash makes of the hint's command line, pasted in ``where``."""
    found = HINT.search(stderr.strip())
    assert found is not None, stderr
    shell = subprocess.run(["bash", "-c", SHELL_ECHO + found.group(1)], cwd=where, capture_output=True, check=True)
    return shell.stdout.decode().split("\0")[:-1]


def parsed(words: list[str]) -> dict[str, object]:
    """What the hint's command reads from the pasted words (options and arguments, before their types)."""
    assert words[0] == "p2w-rt", words
    command = main.get_command(click.Context(main), words[1])
    assert command is not None, words
    values, extra, _ = command.make_parser(click.Context(command, info_name=words[1])).parse_args(words[2:])
    assert extra == [], words
    return values


@pytest.mark.parametrize("label", LABELS)
def test_each_hint_naming_a_run_pastes_as_that_run(db: Path, label: str, tmp_path: Path) -> None:
    hints = {
        "rerun": invoke(db, "rerun", "--", label),  # no installed integration records agentoccam
        "fork": invoke(db, "fork", "--at-step", "1", "--", label, "T1"),  # not p2w-rt's agent
        "attach-dataset": invoke(db, "replay", "--retriever", "default", "--", label),  # recorded without it
        "diff": invoke(db, "diff", "--judge", "rubric-llm", "--", label, "other"),  # not judged
        "agree": invoke(db, "agree", "--judge", "rubric-rules", "--judge", "x", "--", label),
        "agree classify": invoke(db, "agree", "--judge", "classify:rules", "--judge", "x", "--", label),
    }
    words = {}
    for site, result in hints.items():
        assert result.exit_code != 0 and result.stderr.count("\n") == 1, (site, result.output)
        words[site] = pasted(result.stderr, tmp_path)
        values = parsed(words[site])
        assert values.get("run_ref", values.get("run_refs")) in (label, (label,), [label]), (site, words[site])
    assert not list(tmp_path.glob("pwned")), "a label pasted ran a command"
    assert words["rerun"] == ["p2w-rt", "rerun", *_label_and(label, ["--exec", "CMD"])]
    assert words["fork"][:2] == ["p2w-rt", "fork"] and parsed(words["fork"])["task_id"] == "TASK"
    assert words["diff"] == ["p2w-rt", "replay", *_label_and(label, ["--judge", "rubric-llm"])]
    assert words["agree classify"] == ["p2w-rt", "classify", *_label_and(label, ["--classifier", "rules"])]


def _label_and(label: str, options: list[str]) -> list[str]:
    return [*options, "--", label] if label.startswith("-") else [label, *options]


@pytest.mark.parametrize("label", LABELS)
def test_the_hint_to_judge_judges_that_run_when_pasted(db: Path, label: str, tmp_path: Path) -> None:
    refused = invoke(db, "agree", "--judge", "rubric-rules", "--judge", "x", "--", label)
    words = pasted(refused.stderr, tmp_path)
    assert words == ["p2w-rt", "replay", *_label_and(label, ["--judge", "rubric-rules"])]
    assert invoke(db, *words[1:]).exit_code == 0

    async def judged() -> list[str]:
        async with open_store(db) as store:
            run = await find_run(store, label)
            return [r.judgment.judge_id for r in await read_judgments(store, run.run_id)]

    assert asyncio.run(judged()) == ["rubric-rules"]


@pytest.mark.parametrize("label", LABELS)
def test_the_metrics_hint_to_judge_pastes_as_that_run(db: Path, label: str, tmp_path: Path) -> None:
    shown = invoke(db, "metrics", "--judge", "rubric-rules", "--", label)
    assert shown.exit_code == 0 and shown.stderr.count("\n") == 1, shown.output
    assert pasted(shown.stderr, tmp_path) == ["p2w-rt", "replay", *_label_and(label, ["--judge", "rubric-rules"])]
    assert not list(tmp_path.glob("pwned")), "a label pasted ran a command"


UNPRINTABLE = ("tab\there", "two\nlines", "bidi \u202eevil", "\u00e9t\u00e9\u00a0\u00fc")
"""Labels the CLI refuses but a run recorded through the recording API or imported may carry: a hint shows them
escaped (``safe``), and the pasted line must still name the run."""


@pytest.mark.parametrize("label", UNPRINTABLE)
def test_a_label_that_is_not_printable_pastes_as_that_run(label: str, tmp_path: Path) -> None:
    db = build_runs(tmp_path / "p2w.db", [(label, TRUTH, True)], agent="agentoccam")
    refused = invoke(db, "agree", "--judge", "rubric-rules", "--judge", "x", "--", label)
    assert refused.exit_code != 0 and refused.stderr.count("\n") == 1, refused.output
    words = pasted(refused.stderr, tmp_path)
    assert words == ["p2w-rt", "replay", label, "--judge", "rubric-rules"]
    assert invoke(db, *words[1:]).exit_code == 0
