"""The run page's query string (``?level=&website=&label=&success=&end=&judge=&sort=&order=&page=``) and the
search's (``?q=&in=&judge=&page=``) read strictly: a value the viewer does not know is a 400 naming the parameter,
never a filter silently dropped (which would show every episode under a filter the reader believes applied)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import get_args

from p2w_cli.view._episode_rows import SUCCESS_VALUES, EpisodeFilter
from p2w_cli.view._order import ORDERS, SORT_KEYS
from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._search import SEARCH_FIELDS, SearchQuery
from p2w_rt.schemas import EndReason

END_REASONS: tuple[str, ...] = (*get_args(EndReason), "unfinished")
PARAMETERS = ("level", "website", "label", "success", "end", "judge", "sort", "order", "page")
SEARCH_PARAMETERS = ("q", "in", "judge", "page")
MAX_SEARCH = 200
"""Characters of a search: longer than any task id, query or answer phrase worth typing."""
MAX_DIGITS = 18
"""Digits of a page or level number: more than any run has pages, and within SQLite's integers."""


def _whole(name: str, text: str, *, least: int, heading: str = "Bad filter") -> int:
    """ASCII digits only ("²".isdigit(), int("²") fails), and few enough for int() (it refuses 4300 and more)."""
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS or int(text) < least:
        raise BadRequest(heading, f"?{name}={text[:40]!r}: not an integer ≥ {least} of at most {MAX_DIGITS} digits")
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
    sort, order = query.get("sort", ""), query.get("order", "")
    if sort and sort not in SORT_KEYS:
        raise BadRequest("Bad filter", f"?sort={sort!r}: not a sort key; known: {known(SORT_KEYS)}")
    if order and order not in ORDERS:
        raise BadRequest("Bad filter", f"?order={order!r}: not one of {known(ORDERS)}")
    level = query.get("level", "")
    wanted = EpisodeFilter(
        level=_whole("level", level, least=0) if level else None,
        website=query.get("website", ""),
        label=query.get("label", ""),
        success=success,
        end=end,
        judge=query.get("judge", ""),
        sort=sort,
        descending=order == "desc",
    )
    return wanted, _whole("page", query["page"], least=1) if "page" in query else 1


def parse_search(query: Mapping[str, str]) -> tuple[SearchQuery, int]:
    """(the search, the page number) of ``/search``'s query string. Any language searches (``casefold``); what is
    refused is what no recorded text can hold: nothing, more than ``MAX_SEARCH`` characters, a control character,
    or bytes that were not UTF-8 (decoded to U+FFFD)."""
    unknown = sorted(set(query) - set(SEARCH_PARAMETERS))
    if unknown:
        raise BadRequest("Bad search", f"?{unknown[0]}: not a search parameter; known: {known(SEARCH_PARAMETERS)}")
    text = query.get("q", "").strip()
    if not text:
        raise BadRequest("Bad search", "?q: empty; give a task id, words of a query or an answer, or an error label")
    if len(text) > MAX_SEARCH:
        raise BadRequest("Bad search", f"?q: {len(text)} characters; a search holds at most {MAX_SEARCH}")
    if "\ufffd" in text:
        raise BadRequest("Bad search", "?q: not UTF-8 text (percent-encode the search as UTF-8)")
    odd = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs") and c != "\t"), None)
    if odd is not None:
        raise BadRequest("Bad search", f"?q: holds the control character U+{ord(odd):04X}")
    where = query.get("in", "")
    if where and where not in SEARCH_FIELDS:
        raise BadRequest("Bad search", f"?in={where!r}: not a field; known: {known(SEARCH_FIELDS)}")
    wanted = SearchQuery(text, (where,) if where else SEARCH_FIELDS, query.get("judge", ""))
    page = _whole("page", query["page"], least=1, heading="Bad search") if "page" in query else 1
    return wanted, page
