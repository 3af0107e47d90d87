"""``p2w-rt view``: the recorded runs in a browser (runs, run, episode, compare), and a static HTML export.

The package exports the command only; the viewer itself (``p2w_cli.view.app``: ``create_app``, ``export_static``)
is imported when the command runs, since Starlette and Jinja2 cost ``p2w-rt --help`` half a second.
"""

from p2w_cli.view._command import view_cmd

__all__ = ["view_cmd"]
