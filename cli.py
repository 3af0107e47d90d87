"""The p2w-rt command line: the click group ``main``, its global options, and the registration of every command.

Each command lives in its own module of ``p2w_cli`` (one per command or tight group, as in Inspect AI's
``_cli``), so this file stays the thin entry point; the helpers commands share (``run``, ``open_db``,
``echo_json``, ``console``, ``AppContext``) are in ``p2w_cli/_common.py``, exported by ``p2w_cli``.
"""

from __future__ import annotations

from pathlib import Path

import click

from p2w_cli import (
    AppContext,
    MainGroup,
    ModelLoadNotice,
    StoreLocation,
    agree_cmd,
    classify_cmd,
    demo_cmd,
    diff_cmd,
    export_cmd,
    fail_as_one_line,
    fork_cmd,
    history,
    import_cmd,
    import_curation_cmd,
    import_labels_cmd,
    import_trajectories_cmd,
    metrics_cmd,
    record_cmd,
    replay_cmd,
    rerun_cmd,
    runs,
    schema,
    show,
    sites,
    stats_cmd,
    verify,
    view_cmd,
    wants_help,
)
from p2w_cli.attach_dataset import attach_dataset_cmd
from p2w_cli.demo_model import demo_model
from p2w_cli.migrate import migrate_cmd


@click.group(cls=MainGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
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


main.add_command(runs)
main.add_command(show)
main.add_command(verify)
main.add_command(export_cmd)
main.add_command(import_cmd)
main.add_command(schema)
main.add_command(history)
main.add_command(import_trajectories_cmd)
main.add_command(replay_cmd)
main.add_command(rerun_cmd)
main.add_command(fork_cmd)
main.add_command(metrics_cmd)
main.add_command(classify_cmd)
main.add_command(diff_cmd)
main.add_command(stats_cmd)
main.add_command(record_cmd)
main.add_command(sites)
main.add_command(demo_cmd)
main.add_command(demo_model)
main.add_command(view_cmd)
main.add_command(migrate_cmd)
main.add_command(agree_cmd)
main.add_command(import_labels_cmd)
main.add_command(import_curation_cmd)
main.add_command(attach_dataset_cmd)
