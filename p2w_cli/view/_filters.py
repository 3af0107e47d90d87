"""The run page's query string (``?level=&website=&label=&success=&end=&judge=&page=``) read strictly: a value
the viewer does not know is a 400 naming the parameter, never a filter silently dropped (which would show every
episode under a filter the reader believes applied)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._queries import SUCCESS_VALUES, EpisodeFilter
from schemas import EndReason

END_REASONS: tuple[str, ...] = (*get_args(EndReason), "unfinished")
PARAMETERS = ("level", "website", "label", "success", "end", "judge", "page")


def _whole(name: str, text: str, *, least: int) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < least:  # "²".isdigit(), int("²") fails
        raise BadRequest("Bad filter", f"?{name}={text!r}: not an integer ≥ {least}")
    return int(text)


def parse_filter(query: Mapping[str, str]) -> tuple[EpisodeFilter, int]:
    """(the filter, the page number) of a run page's query string; what it names is checked against the run by
    ``run_page``."""
    unknown = sorted(set(query) - set(PARAMETERS))
    if unknown:
        raise BadRequest("Bad filter", f"?{unknown[0]}: not a run page parameter; known: {known(PARAMETERS)}")
    success, end = query.get("success", ""), query.get("end", "")
    if success not in SUCCESS_VALUES:
        raise BadRequest("Bad filter", f"?success={success!r}: not one of {known(SUCCESS_VALUES[1:])}")
    if end and end not in END_REASONS:
        raise BadRequest("Bad filter", f"?end={end!r}: not an end reason; known: {known(END_REASONS)}")
    level = query.get("level", "")
    wanted = EpisodeFilter(
        level=_whole("level", level, least=0) if level else None,
        website=query.get("website", ""),
        label=query.get("label", ""),
        success=success,
        end=end,
        judge=query.get("judge", ""),
    )
    return wanted, _whole("page", query["page"], least=1) if "page" in query else 1
