"""Benchmarks are plugins (issue 24): the generic registry, settings and judge base name no benchmark, and a
plugin registered from outside (a tiny one, defined here) is a ``--judge`` choice that receives its own settings
and options, with no edit of the CLI or the registry."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import p2w_rt.replay.derived._registry as registry
from p2w_rt.cli import main
from p2w_rt.replay.derived import (
    Deferred,
    OptionError,
    PassSettings,
    Plugin,
    PluginOption,
    ProducerConfig,
    family,
    register_plugin,
)
from p2w_rt.replay.judges import Judge, JudgeContext, Scorecard, read_judgments
from p2w_rt.replay.persona2web import RubricRulesJudge
from p2w_rt.schemas import Evidence
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.store import open_store
from tests.helpers.builders import make_run
from tests.helpers.paths import REPO

GENERIC = [*sorted((REPO / "replay" / "derived").glob("*.py")), *sorted((REPO / "replay" / "judges").glob("*.py"))]
"""The registry, the common settings and the pass, and the whole judge family: its base, stream, estimate and
options."""
BENCHMARKS = ("persona2web", "rubric", "webarena", "agenticshop", "shop", "demo", "p2w.test")


def identifiers(path: Path) -> Iterator[str]:
    """Every name a module's code spells: imports, names, attributes, definitions, arguments, keywords, and
    the string constants that are not docstrings (a hard-coded site list would be one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.alias):
            yield node.name
        elif isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            yield node.arg
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: str(p.relative_to(REPO)))
def test_the_generic_modules_name_no_benchmark(path: Path) -> None:
    named = sorted({name for name in identifiers(path) for b in BENCHMARKS if b in name.lower()})
    assert not named, f"{path.relative_to(REPO)} names a benchmark: {named}"


def test_the_persona2web_plugin_names_no_other_benchmark() -> None:
    """The benchmarks' plugins stand side by side on the judge family: the Persona2Web rubric names neither of the
    others (``tests/architecture/test_layering.py`` keeps them and the family from importing it)."""
    for path in sorted((REPO / "replay" / "persona2web").glob("*.py")):
        named = sorted({n for n in identifiers(path) for b in ("webarena", "agenticshop") if b in n.lower()})
        assert not named, f"{path.relative_to(REPO)} names another benchmark: {named}"


def test_the_check_sees_a_benchmark_where_one_is_named() -> None:
    """The AST walk is not blind: the WebArena plugin's own module is caught by it."""
    found = set(identifiers(REPO / "replay" / "webarena" / "_plugin.py"))
    assert {"p2w_rt.replay.webarena._settings", "p2w_rt.replay.webarena._judge:WebArenaJudge", "webarena"} <= found


@dataclass(frozen=True)
class EchoSettings:
    """The tiny plugin's settings: only it reads them."""

    level: float = 0.5


class EchoConfig(ProducerConfig):
    level: float


def echo_settings(values: Mapping[str, Any]) -> EchoSettings:
    given = values.get("echo_level")
    if given is None:
        return EchoSettings()
    try:
        return EchoSettings(level=float(given))
    except ValueError:
        raise OptionError("--echo-level", f"expected a number, got {given!r}") from None


class EchoJudge(Judge[EchoConfig]):
    """Awards the level it was given, so the judgment shows which settings reached it."""

    id = "echo-test"
    version = "1"
    description = "a test plugin's judge that awards its --echo-level"

    def configure(self, settings: PassSettings) -> EchoConfig:
        return EchoConfig(level=settings.of(EchoSettings).level)

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        card = Scorecard()
        card.award("level", self.config.level, 1.0, Evidence(note="the level this judge was configured with"))
        return card


ECHO = Plugin(
    name="echo-test",
    kind="judge",
    producers=(EchoJudge,),
    settings=echo_settings,
    options=(PluginOption("--echo-level", "echo_level", "The level the echo judge awards.", metavar="X"),),
)


@pytest.fixture
def echo_plugin(monkeypatch: pytest.MonkeyPatch) -> Plugin:
    """``ECHO`` registered for the test only (the registry's plugins are restored after it)."""
    family("judge")  # the built-in plugins first, as the CLI finds them
    monkeypatch.setitem(registry._PLUGINS, ECHO.name, ECHO)
    return ECHO


def test_a_registered_plugin_is_a_judge_choice_with_its_options(echo_plugin: Plugin) -> None:
    result = CliRunner().invoke(main, ["replay", "--help"])
    assert result.exit_code == 0, result.output
    text = "".join(result.output.split())
    assert "echo-test:atestplugin'sjudgethatawardsits--echo-level" in text
    assert "--echo-levelX" in text and "--webarena-config" in text
    assert family("judge").default == "rubric-rules", "a plugin added later does not become the default"


def test_a_plugin_cannot_take_an_id_another_plugin_has() -> None:
    family("judge")
    with pytest.raises(ValueError, match="rubric-rules"):
        register_plugin(Plugin(name="copycat", kind="judge", producers=(RubricRulesJudge,)))
    assert "copycat" not in {p.name for p in family("judge").plugins}


def test_a_deferred_producer_is_imported_when_first_needed() -> None:
    """The built-in plugins name the judges they do not need to register by id (``Deferred``): the family lists
    them, checks an id and parses their options without importing them; asking for one imports its module, and
    only its."""
    code = (
        "import sys; from p2w_rt.replay.derived import family\n"
        "judges = family('judge')\n"
        "modules = ('p2w_rt.replay.webarena._judge', 'p2w_rt.replay.agenticshop._judges', "
        "'p2w_rt.replay.persona2web._llm', 'p2w_rt.replay.persona2web._rules')\n"
        "ids = judges.ids\n"
        "print(judges.default, *ids[:2], 'webarena' in ids, 'attribution' in ids, len(judges.options()))\n"
        "judges.check('rubric-llm'); judges.check('webarena')\n"
        "try:\n    judges.check('no-such-judge')\n"
        "except judges.unknown as e:\n    assert 'known: rubric-rules' in str(e)\n"
        "else:\n    raise AssertionError('an unknown id passed')\n"
        "print(*(m in sys.modules for m in modules))\n"
        "assert judges.get('webarena').id == 'webarena' and judges.get('rubric-rules').id == 'rubric-rules'\n"
        "print(*(m in sys.modules for m in modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed, before, after = done.stdout.splitlines()
    assert listed.split()[:5] == ["rubric-rules", "rubric-rules", "rubric-llm", "True", "True"], listed
    assert int(listed.split()[5]) == len(family("judge").options())
    assert before == "False False False False" and after == "True False False True"


def test_a_deferred_producer_must_hold_the_ids_it_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    family("judge")
    wrong = Plugin(name="mislabelled", kind="judge", producers=(Deferred(("not-echo",), f"{__name__}:EchoJudge"),))
    monkeypatch.setitem(registry._PLUGINS, wrong.name, wrong)
    assert "not-echo" in family("judge").ids
    with pytest.raises(ValueError, match=r"EchoJudge holds the producers \['echo-test'\], not the ids declared"):
        family("judge").get("not-echo")


def test_a_plugin_is_gone_with_its_registration() -> None:
    result = CliRunner().invoke(main, ["replay", "--help"])
    assert "echo-test" not in result.output and "--echo-level" not in result.output


def _db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "echo.db"

    async def build() -> str:
        async with open_store(db, create=True) as store:
            return await make_run(store, ("Alex_Garcia_A1",))

    return db, asyncio.run(build())


def test_the_plugin_judge_receives_its_own_settings(echo_plugin: Plugin, tmp_path: Path) -> None:
    db, run_id = _db(tmp_path)
    args = ["--db", str(db), "replay", run_id, "--judge", "echo-test", "--json"]
    result = CliRunner().invoke(main, [*args, "--echo-level", "0.75"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (row,) = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert (row["judge"], row["points"]) == ("echo-test", {"level": 0.75})
    default = CliRunner().invoke(main, args, catch_exceptions=False)
    (row,) = [json.loads(line) for line in default.stdout.splitlines() if line.startswith("{")]
    assert row["points"] == {"level": 0.5} and not row["cached"], "another setting is another cache key"


def test_a_bad_plugin_option_names_the_option_and_records_nothing(echo_plugin: Plugin, tmp_path: Path) -> None:
    db, run_id = _db(tmp_path)
    result = CliRunner().invoke(main, ["--db", str(db), "replay", run_id, "--judge", "echo-test", "--echo-level", "x"])
    assert result.exit_code == 2 and "--echo-level" in result.output and "Traceback" not in result.output

    async def judgments() -> list[Any]:
        async with open_store(db) as store:
            return await read_judgments(store, run_id)

    assert asyncio.run(judgments()) == [], "nothing was judged before the bad value was found"
