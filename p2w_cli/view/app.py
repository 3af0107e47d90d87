"""The viewer: the recorded runs in a browser (runs, run, episode, compare), and a static HTML export."""

from p2w_cli.view._app import PAGE_CSP, create_app
from p2w_cli.view._blobs import BlobProblem
from p2w_cli.view._export import ExportSummary, export_static

__all__ = ["PAGE_CSP", "BlobProblem", "ExportSummary", "create_app", "export_static"]
