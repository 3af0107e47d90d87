"""``p2w-rt view``: the recorded runs in a browser (runs, run, episode, compare), and a static HTML export."""

from replay.view._app import create_app
from replay.view._blobs import BlobProblem
from replay.view._export import ExportSummary, export_static

__all__ = ["BlobProblem", "ExportSummary", "create_app", "export_static"]
