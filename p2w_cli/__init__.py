"""The commands of the p2w-rt CLI, one module per command or tight group; ``cli.main`` registers them.

Each command imports its heavy dependencies inside its function, so ``p2w-rt --help`` loads none of them.
"""

from p2w_cli._common import AppContext, MainGroup, ModelLoadNotice, StoreLocation, fail_as_one_line, wants_help
from p2w_cli.agenticshop import import_curation_cmd
from p2w_cli.agree import agree_cmd, import_labels_cmd
from p2w_cli.classify import classify_cmd
from p2w_cli.demo import demo_cmd
from p2w_cli.diff import diff_cmd, stats_cmd
from p2w_cli.fork import fork_cmd
from p2w_cli.history import history
from p2w_cli.import_trajectories import import_trajectories_cmd
from p2w_cli.integrity import export_cmd, import_cmd, verify
from p2w_cli.record import record_cmd
from p2w_cli.replay import metrics_cmd, replay_cmd
from p2w_cli.rerun import rerun_cmd
from p2w_cli.runs import runs, show
from p2w_cli.schema import schema
from p2w_cli.sites import sites
from p2w_cli.view import view_cmd

__all__ = [
    "AppContext",
    "MainGroup",
    "ModelLoadNotice",
    "StoreLocation",
    "agree_cmd",
    "classify_cmd",
    "demo_cmd",
    "diff_cmd",
    "export_cmd",
    "fail_as_one_line",
    "fork_cmd",
    "history",
    "import_cmd",
    "import_curation_cmd",
    "import_labels_cmd",
    "import_trajectories_cmd",
    "metrics_cmd",
    "record_cmd",
    "replay_cmd",
    "rerun_cmd",
    "runs",
    "schema",
    "show",
    "sites",
    "stats_cmd",
    "verify",
    "view_cmd",
    "wants_help",
]
