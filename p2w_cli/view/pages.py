"""The viewer's page data without its server: what a command uses to keep the viewer's stored pages current."""

from p2w_cli.view._refresh import refresh_first_pages

__all__ = ["refresh_first_pages"]
