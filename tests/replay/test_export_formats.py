"""One export contract (``replay/exports.py``): ``export --format`` offers the table's formats with the table's help,
each resolves to an exporter and has a report, and naming them loads none of their heavy libraries."""

from __future__ import annotations

import inspect
import subprocess
import sys

from click.testing import CliRunner

from p2w_cli.render.export import REPORTS
from p2w_rt.cli import main
from p2w_rt.replay.exports import EXPORT_FORMATS


def test_the_format_choices_and_their_help_come_from_the_table() -> None:
    said = CliRunner().invoke(main, ["export", "--help"], terminal_width=400)
    assert said.exit_code == 0, said.output
    text = " ".join(said.output.split())
    assert f"[{'|'.join(EXPORT_FORMATS)}]" in text
    for f in EXPORT_FORMATS.values():
        assert f"{f.name}: {' '.join(f.help.split())}" in text


def test_every_format_resolves_to_an_exporter_of_one_shape_and_has_a_report() -> None:
    assert set(REPORTS) == set(EXPORT_FORMATS)
    for f in EXPORT_FORMATS.values():
        exporter = f.load()
        assert inspect.iscoroutinefunction(exporter), f.name
        assert list(inspect.signature(exporter).parameters) == ["store", "runs", "request"], f.name


def test_the_export_command_and_its_table_load_no_exporter() -> None:
    code = "import sys, p2w_cli.integrity; print(' '.join(sorted(sys.modules)))"
    said = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    loaded = set(said.stdout.split())
    assert "p2w_rt.replay.exports" in loaded
    for heavy in ("pyarrow", "google.protobuf", "zstandard", "p2w_rt.replay.otel", "p2w_rt.replay.parquet"):
        assert heavy not in loaded, heavy
