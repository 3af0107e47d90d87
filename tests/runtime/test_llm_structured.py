"""Finding and validating the JSON a model wrote around its prose."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from p2w_runtime.llm import MalformedOutput
from p2w_runtime.llm._structured import parse_structured


class Score(BaseModel):
    points: int


@pytest.mark.parametrize(
    "text",
    ['{"points": 3}', '  {"points": 3}\n', 'Sure!\n```json\n{"points": 3}\n```', 'My verdict: {"points": 3}. Done.'],
)
def test_json_is_found_in_common_wrappers(text: str) -> None:
    assert parse_structured(text, Score) == Score(points=3)


def test_no_json_is_reported_with_the_answer() -> None:
    with pytest.raises(MalformedOutput, match="no JSON object found.*three points"):
        parse_structured("three points", Score)


def test_schema_mismatch_names_the_field() -> None:
    with pytest.raises(MalformedOutput, match=r"does not match Score: points:"):
        parse_structured('{"points": "many"}', Score)
