"""Deterministic matching of expected values, locations and websites in recorded text and URLs. Its names load on
first use: reading a host or a site alias compiles none of the value and number patterns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.matching._numbers import number_mentions, number_value
    from p2w_rt.replay.matching._patterns import compile_value
    from p2w_rt.replay.matching._sites import (
        SITE_ALIASES,
        alias_target,
        expected_hosts,
        host_of,
        mentions_site,
        on_site,
        site_aliases,
        site_hosts,
    )
    from p2w_rt.replay.matching._tokens import key_tokens, normalize, tokenize, tokenize_normalized
    from p2w_rt.replay.matching._values import TextSet, ValueMatch, find_value

__all__ = [
    "SITE_ALIASES",
    "TextSet",
    "ValueMatch",
    "alias_target",
    "compile_value",
    "expected_hosts",
    "find_value",
    "host_of",
    "key_tokens",
    "mentions_site",
    "normalize",
    "number_mentions",
    "number_value",
    "on_site",
    "site_aliases",
    "site_hosts",
    "tokenize",
    "tokenize_normalized",
]

_MODULES = {
    "number_mentions": "_numbers",
    "number_value": "_numbers",
    "SITE_ALIASES": "_sites",
    "alias_target": "_sites",
    "expected_hosts": "_sites",
    "host_of": "_sites",
    "mentions_site": "_sites",
    "on_site": "_sites",
    "site_aliases": "_sites",
    "site_hosts": "_sites",
    "key_tokens": "_tokens",
    "normalize": "_tokens",
    "tokenize": "_tokens",
    "tokenize_normalized": "_tokens",
    "TextSet": "_values",
    "ValueMatch": "_values",
    "compile_value": "_patterns",
    "find_value": "_values",
}
"""Where each exported name lives."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
