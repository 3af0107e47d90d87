"""The p2w-rt command line: the click group ``main``, its global options, and the registration of every command.

Each command lives in its own module of ``p2w_cli`` (one per command or tight group, as in Inspect AI's
``_cli``), so this file stays the thin entry point; the helpers commands share (``run``, ``open_db``,
``echo_json``, ``console``, ``AppContext``) are in ``p2w_cli/_common.py``, exported by ``p2w_cli``.
"""

from __future__ import annotations

import sys

try:  # Ctrl-C while the CLI's modules load ends as one anywhere later does (``p2w_cli._common.interrupted``)
    from pathlib import Path

    import click

    from p2w_cli import AppContext, MainGroup, ModelLoadNotice, StoreLocation, fail_as_one_line, wants_help
except KeyboardInterrupt:
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

COMMANDS = {
    "runs": "p2w_cli.runs:runs",
    "show": "p2w_cli.runs:show",
    "verify": "p2w_cli.integrity:verify",
    "export": "p2w_cli.integrity:export_cmd",
    "import": "p2w_cli.integrity:import_cmd",
    "schema": "p2w_cli.schema:schema",
    "history": "p2w_cli.history:history",
    "import-trajectories": "p2w_cli.import_trajectories:import_trajectories_cmd",
    "replay": "p2w_cli.replay:replay_cmd",
    "rerun": "p2w_cli.rerun:rerun_cmd",
    "fork": "p2w_cli.fork:fork_cmd",
    "metrics": "p2w_cli.replay:metrics_cmd",
    "classify": "p2w_cli.classify:classify_cmd",
    "diff": "p2w_cli.diff:diff_cmd",
    "stats": "p2w_cli.diff:stats_cmd",
    "record": "p2w_cli.record:record_cmd",
    "sites": "p2w_cli.sites:sites",
    "demo": "p2w_cli.demo:demo_cmd",
    "demo-model": "p2w_cli.demo_model:demo_model",
    "view": "p2w_cli.view:view_cmd",
    "migrate": "p2w_cli.migrate:migrate_cmd",
    "compact": "p2w_cli.compact:compact_cmd",
    "agree": "p2w_cli.agree:agree_cmd",
    "import-labels": "p2w_cli.agree:import_labels_cmd",
    "import-curation": "p2w_cli.agenticshop:import_curation_cmd",
    "attach-dataset": "p2w_cli.attach_dataset:attach_dataset_cmd",
}
"""Every command, as ``module:attribute``: ``MainGroup`` imports a command's module when the command line names it
(or ``--help`` lists them all), so ``runs`` loads only ``p2w_cli.runs`` (docs/design/startup.md)."""


@click.group(
    cls=MainGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.option(
    "--db",
    envvar="P2W_DB",
    default="p2w.db",
    show_default=True,
    type=StoreLocation(),
    help="Event store: a SQLite file or a postgresql://USER@HOST:PORT/DB URL. Env: P2W_DB.",
)
@click.option(
    "--log-file",
    envvar="P2W_LOG_FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON-lines log file (default: the user log dir). Env: P2W_LOG_FILE.",
)
@click.option("-v", "--verbose", count=True, help="More console logging (-v info, -vv debug).")
@click.version_option(package_name="p2w-rt")
@click.pass_context
def main(ctx: click.Context, db: Path | str, log_file: Path | None, verbose: int) -> None:
    """Record, judge, classify and diff personalized web-agent runs."""
    if wants_help(ctx):  # help needs no log file, so an unusable one cannot hide it
        return
    from p2w_runtime.logs import configure_logging

    ctx.obj = AppContext(
        db=db, log_file=fail_as_one_line(lambda: configure_logging(verbose=verbose, log_file=log_file))
    )
    ModelLoadNotice.install()
