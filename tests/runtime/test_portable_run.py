"""A run moved to another machine is judged, re-executed, searched again and forked from what it carries.

Issue 25's walkthrough, as a user runs it: ``p2w-rt demo``; export ``earlier``; in another folder, into a new
database, import the bundle; then ``rerun`` (24 identical), ``replay --retriever default``, ``fork`` against the
scripted model and ``replay --judge rubric-rules``. The sample folders are made unreachable for the second half
(the package's sample folder is renamed away), so every step can only have read the dataset from the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def script() -> SampleAgentScript:
    """The scripted model's answers, read from the sample before its folders go (the model is not the run)."""
    return SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())


@pytest.fixture
def sample_folders_gone(script: SampleAgentScript) -> Iterator[None]:
    """The sample's task and history folders renamed away while the test runs (restored however it ends)."""
    moved = []
    try:
        for folder in (sample_tasks_dir(), sample_history_dir()):
            away = folder.with_name(f"{folder.name}.away-{os.getpid()}")
            folder.rename(away)
            moved.append((folder, away))
        yield
    finally:
        for folder, away in moved:
            away.rename(folder)


@pytest.mark.alone  # the package's sample folders are renamed away: no other test may read them meanwhile
def test_a_demo_run_exported_and_imported_elsewhere_reruns_searches_forks_and_judges_from_itself(
    tmp_path: Path, script: SampleAgentScript, sample_folders_gone: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, there = tmp_path / "december", tmp_path / "march"
    here.mkdir()
    there.mkdir()
    monkeypatch.chdir(here)
    assert not sample_tasks_dir().exists() and not sample_history_dir().exists()
    assert invoke("demo").exit_code == 0
    bundle = here / "e.p2w"
    exported = invoke("--db", "p2w-demo/demo.db", "export", "earlier", "-o", str(bundle))
    assert exported.exit_code == 0, exported.output

    monkeypatch.chdir(there)
    db = str(there / "march.db")
    imported = invoke("--db", db, "import", str(bundle))
    assert imported.exit_code == 0, imported.output

    rerun = invoke("--db", db, "rerun", "earlier", "--json")
    assert rerun.exit_code == 0, rerun.output
    report = json.loads(rerun.stdout)
    assert report["identical"] is True and len(report["episodes"]) == 24

    searched = invoke("--db", db, "replay", "earlier", "--retriever", "default", "--json")
    assert searched.exit_code == 0, searched.output
    assert "history folder" not in searched.output

    with ScriptedLlm() as llm:
        llm.handle_with(script)
        forked = invoke(
            "--db", db, "fork", "earlier", "Priya_Raman_A1", "--at-step", "2",
            "--base-url", llm.base_url, "--label", "march-fork",
        )  # fmt: skip
    assert forked.exit_code == 0, forked.output
    assert "at step 2 into march-fork" in forked.output

    judged = invoke("--db", db, "replay", "earlier", "--judge", "rubric-rules", "--json")
    assert judged.exit_code == 0, judged.output
    assert json.loads(invoke("--db", db, "verify", "--json").stdout)["ok"]
