"""Deterministic matching of expected values, locations and websites in recorded text and URLs."""

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
