"""The bundled example runs import and rerun identical with today's agent code, from their own dataset.

They were recorded by ``scripts/make_example_runs.py``; when the agent or the sites change so that they no
longer rerun identical, or the run format so that they no longer import, this fails: re-record them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from p2w_runtime.demo.examples import example_run_bundles


@pytest.mark.parametrize("bundle", example_run_bundles(), ids=lambda p: p.stem)
def test_a_bundled_run_imports_and_reruns_identical_from_the_files_it_carries(bundle: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "examples.db")
    imported = CliRunner().invoke(main, ["--db", db, "import", str(bundle)], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    rerun = CliRunner().invoke(main, ["--db", db, "rerun", bundle.stem, "--json"], catch_exceptions=False)
    assert rerun.exit_code == 0, rerun.output
    report = json.loads(rerun.stdout)
    assert report["identical"] is True and len(report["episodes"]) == 24
