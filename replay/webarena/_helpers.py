"""WebArena's ``func:`` helpers (``evaluation_harness/helper_functions.py``) as far as they run offline.

A helper that only reads the page it is given runs on the recorded final page; one that calls
the site's REST API (``shopping_get_*``) needs the live site and is refused with that reason.
Calls are parsed with ``ast``, never ``eval``-ed: a config is data, not code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from urllib.parse import urlparse, urlsplit

from p2w_rt.replay.webarena._page import RecordedPage

LIVE_SITE_HELPERS = frozenset(
    {"shopping_get_latest_order_url", "shopping_get_sku_latest_review_author", "shopping_get_sku_latest_review_rating"}
)
"""Helpers that ask the shopping site's REST API, so no recording can answer them."""


URL_HELPERS = {"reddit_get_post_url": 1, "shopping_get_latest_order_url": 0}
"""Helpers a ``program_html`` ``url`` may call, with their number of arguments."""
LOCATOR_HELPERS = {
    "gitlab_get_project_memeber_role": 2,
    "shopping_get_sku_latest_review_author": 1,
    "shopping_get_sku_latest_review_rating": 1,
}
"""Helpers a ``program_html`` ``locator`` may call, with their number of arguments."""


class NeedsLiveSite(Exception):
    """The check reads something the recording does not hold; it is not scored."""


@dataclass(frozen=True, slots=True)
class HelperCall:
    name: str
    args: tuple[str, ...]
    """String literals as written; ``__page__`` (the page argument) is kept as that name."""


def check_call(source: str, known: dict[str, int]) -> HelperCall:
    """``parse_call`` plus: a helper of ``known`` with its number of arguments (for config validation)."""
    call = parse_call(source)
    if call.name not in known:
        raise ValueError(f"unknown helper {call.name!r} (WebArena knows {', '.join(sorted(known))})")
    if len(call.args) != known[call.name]:
        raise ValueError(f"helper {call.name!r} takes {known[call.name]} argument(s), got {len(call.args)}")
    return call


def parse_call(source: str) -> HelperCall:
    """``reddit_get_post_url('http://...')`` -> HelperCall; anything but a call with literal/``__page__`` args fails."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(f"not a helper call: {source[:80]!r}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        raise ValueError(f"not a helper call: {source[:80]!r}")
    args: list[str] = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(arg.value)
        elif isinstance(arg, ast.Name) and arg.id in {"__page__", "page"}:
            args.append("__page__")
        else:
            raise ValueError(f"helper argument is not a string literal: {source[:80]!r}")
    return HelperCall(node.func.id, tuple(args))


def reddit_get_post_url(url: str) -> str:
    """The post a comment URL (``/f/<forum>/<post>/...``) belongs to; any other URL unchanged."""
    parts = urlparse(url)
    path = parts.path.split("/")
    if len(path) < 4 or path[1] != "f":
        return url
    return f"{parts.scheme}://{parts.netloc}/f/{path[2]}/{path[3]}/"


_SINGLE_DOT = frozenset({".", "%2e"})
_DOUBLE_DOT = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})


def resolve_dot_segments(url: str) -> str:
    """The URL ``page.goto(url)`` loads: ``.`` and ``..`` path segments removed as Chromium's URL parser does.

    RFC 3986 ``remove_dot_segments`` in the WHATWG spelling Chromium follows: ``%2e`` is a dot, ``..``
    at the root stays there, a final ``.`` or ``..`` leaves a trailing slash. Query and fragment are
    kept as written; no other canonicalization is done (the configs need none).
    """
    parts = urlsplit(url)
    head = f"{parts.scheme}://{parts.netloc}"
    if not parts.netloc or url[: len(head)].lower() != head.lower():
        return url
    segments = parts.path.split("/")[1:]
    kept: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment.lower() in _DOUBLE_DOT:
            if kept:
                kept.pop()
            if last:
                kept.append("")
        elif segment.lower() in _SINGLE_DOT:
            if last:
                kept.append("")
        else:
            kept.append(segment)
    path = "/" + "/".join(kept) if segments else parts.path
    return url[: len(head)] + path + url[len(head) + len(parts.path) :]


def shows(final_url: str, target: str) -> bool:
    """Whether the recorded final page is the page WebArena's ``page.goto(target)`` would read.

    Equal up to a trailing slash; or ``target`` is a Postmill post URL (``/f/<forum>/<id>/``, what
    ``reddit_get_post_url`` returns, which the live site redirects to the post's canonical
    ``/f/<forum>/<id>/<slug>``) and the agent ended on that canonical page. A comment permalink
    (``.../-/comment/<id>``) is another page and does not count.
    """
    if final_url.rstrip("/") == target.rstrip("/"):
        return True
    post, final = urlparse(target), urlparse(final_url)
    post_path, final_path = post.path.split("/"), final.path.rstrip("/").split("/")
    is_post_target = len(post_path) == 5 and post_path[1] == "f" and post_path[4] == "" and not post.query
    return (
        is_post_target
        and (final.scheme, final.netloc) == (post.scheme, post.netloc)
        and len(final_path) == 5
        and final_path[:4] == post_path[:4]
        and final_path[4] != "-"
        and not final.query
    )


def target_url(url: str, current_url: str) -> str:
    """What ``program_html``'s ``url`` resolves to: ``"last"``, or the URL the browser loads for a URL or a
    helper's result (``__SHOPPING_ADMIN__/../x.html`` is ``http://host:7780/x.html``)."""
    if not url.startswith("func"):
        return resolve_dot_segments(url)
    call = parse_call(url.split("func:")[1].replace("__last_url__", current_url))
    if call.name == "reddit_get_post_url":
        return resolve_dot_segments(reddit_get_post_url(call.args[0]))
    if call.name in LIVE_SITE_HELPERS:
        raise NeedsLiveSite(f"program_html url {url!r} asks the site's API")
    raise ValueError(f"unknown helper {call.name!r} in program_html url")


_MEMBER_INDEX = """(() => {{
                const elements = document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel");
                let index = -1;  // Default value if not found

                for(let i = 0; i < elements.length; i++) {{
                    if(elements[i].outerText === '@{account_name}') {{
                        index = i;
                        break;
                    }}
                }}

                return index;
            }})()"""

_MEMBER_ROLE = """(() => {{
                return document.querySelectorAll("td.col-max-role span")[{account_idx}].outerText;
            }})()"""


async def gitlab_get_project_memeber_role(page: RecordedPage, account_name: str) -> str:
    """The role shown for ``@account_name`` on a GitLab project's members page ("" when not listed)."""
    try:
        account_idx = await page.evaluate(_MEMBER_INDEX.format(account_name=account_name))
        return str(await page.evaluate(_MEMBER_ROLE.format(account_idx=account_idx)))
    except Exception:
        return ""


async def locate_with_helper(locator: str, page: RecordedPage) -> str:
    """A ``func:`` locator on the recorded page."""
    call = parse_call(locator.split("func:")[1])
    if call.name == "gitlab_get_project_memeber_role":
        return await gitlab_get_project_memeber_role(page, call.args[1])
    if call.name in LIVE_SITE_HELPERS:
        raise NeedsLiveSite(f"program_html locator {locator[:80]!r} asks the site's API")
    raise ValueError(f"unknown helper {call.name!r} in program_html locator")
