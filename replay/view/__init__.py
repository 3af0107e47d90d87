"""``p2w-rt view``: the recorded runs in a browser (runs, run, episode, compare), and a static HTML export."""

from replay.view._app import PAGE_CSP, RECORDED_CSP, create_app
from replay.view._blobs import BlobProblem, read_blob
from replay.view._export import ExportSummary, export_static

__all__ = ["PAGE_CSP", "RECORDED_CSP", "BlobProblem", "ExportSummary", "create_app", "export_static", "read_blob"]
