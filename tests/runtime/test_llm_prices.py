"""Cost table, user price files, and the usage/cost sums an episode and a run report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2w_rt.schemas import LlmCall, LlmUsage
from p2w_runtime.llm import LlmConfigError, ModelPrice, PriceTable, UsageTotals
from p2w_runtime.llm._request import fingerprint


def usage(prompt: int, completion: int) -> LlmUsage:
    return LlmUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


def test_builtin_table_prices_common_models_as_published() -> None:
    table = PriceTable.builtin()
    assert table.price("gpt-4.1") == ModelPrice(0.002, 0.008)
    assert table.price("gpt-4o-mini") == ModelPrice(0.00015, 0.0006)
    assert {"gpt-4.1-mini", "gpt-4o", "gpt-5-mini", "o4-mini"} <= set(table.models)
    assert table.cost("gpt-4.1", usage(2000, 1000)) == pytest.approx(2 * 0.002 + 1 * 0.008)


def test_snapshots_and_provider_prefixes_resolve_but_other_variants_are_not_guessed() -> None:
    table = PriceTable.builtin()
    assert table.price("gpt-4o-2024-08-06") == table.price("gpt-4o")
    assert table.price("gpt-4o-mini-2024-07-18") == table.price("gpt-4o-mini")
    assert table.price("openai/gpt-4.1-mini") == table.price("gpt-4.1-mini")
    assert table.price("gpt-5-pro") is None
    assert table.cost("llama-3.1-8b-instruct", usage(10, 10)) is None
    assert table.cost("gpt-4.1", None) is None


def test_user_file_extends_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "my-local": {"input_per_1k": 0, "output_per_1k": 0},
                "gpt-4.1": {"input_per_1k": 1.0, "output_per_1k": 2.0},
            }
        )
    )
    table = PriceTable.default(path)
    assert table.cost("my-local", usage(100, 100)) == 0.0
    assert table.price("gpt-4.1") == ModelPrice(1.0, 2.0)
    assert table.price("gpt-4o") == PriceTable.builtin().price("gpt-4o")

    monkeypatch.setenv("P2W_PRICES", str(path))
    assert PriceTable.default().price("my-local") == ModelPrice(0.0, 0.0)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{oops", "not valid JSON"),
        ('{"m": {"input_per_1k": -1, "output_per_1k": 0}}', "m.input_per_1k"),
        ('{"m": {"input_per_1k": 1}}', "m.output_per_1k"),
        ("[1, 2]", "expected an object"),
    ],
)
def test_bad_price_file_names_file_and_field(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(LlmConfigError, match=expected) as info:
        PriceTable.load(path)
    assert str(path) in str(info.value)


def test_missing_price_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(LlmConfigError, match="nope.json"):
        PriceTable.load(tmp_path / "nope.json")


def call(
    *,
    response: str | None,
    cost: float | None,
    tokens: tuple[int, int] | None,
    error: str | None = None,
    attempt: int = 1,
) -> LlmCall:
    return LlmCall(
        role="planner",
        model="m",
        messages=[],
        latency_s=0.1,
        fingerprint=fingerprint("m", [], {}),
        ordinal=0,
        response=response,
        cost_usd=cost,
        usage=usage(*tokens) if tokens else None,
        error=error,
        attempt=attempt,
    )


def test_totals_fold_attempts_calls_tokens_and_cost() -> None:
    episode = UsageTotals.of(
        [
            call(response=None, cost=None, tokens=None, error="HTTP 500: x"),
            call(response="ok", cost=0.5, tokens=(100, 10), attempt=2),
            call(response="nope", cost=0.25, tokens=(50, 5), error="malformed output: no JSON"),
        ]
    )
    assert (episode.attempts, episode.failed_attempts, episode.calls) == (3, 2, 2)
    assert (episode.prompt_tokens, episode.completion_tokens, episode.total_tokens) == (150, 15, 165)
    assert episode.cost_usd == pytest.approx(0.75) and episode.unpriced_calls == 0

    unpriced = UsageTotals.of([call(response="ok", cost=None, tokens=None)])
    assert unpriced.cost_usd is None and unpriced.unpriced_calls == 1
    assert UsageTotals().cost_usd is None

    run = episode.merge(unpriced)
    assert (run.calls, run.unpriced_calls, run.prompt_tokens) == (3, 1, 150)
    assert run.cost_usd == pytest.approx(0.75)
