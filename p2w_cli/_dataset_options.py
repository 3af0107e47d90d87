"""The options a command that reads a run's dataset shares: a folder instead of the run's own, and the
explicit ``--other-dataset`` that lets a folder with other content stand in (docs/design/dataset.md)."""

from __future__ import annotations

from pathlib import Path

import click

HISTORY_HELP = (
    "Memory-bank folder to retrieve from instead of the banks the run carries; refused when a bank differs "
    "from the run's (unless --other-dataset)."
)

history_option = click.option(
    "--history", "history_dir", type=click.Path(file_okay=False, path_type=Path), help=HISTORY_HELP
)
other_dataset_option = click.option(
    "--other-dataset",
    is_flag=True,
    help="Use the --history folder although its banks differ from the run's (recorded in what this writes).",
)
