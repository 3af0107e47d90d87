"""The llm classifier against the scripted OpenAI-compatible server: labels, evidence, recorded calls, cache."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.classify import (
    CLASSIFIERS,
    LlmClassifier,
    classification_stream,
    read_classifications,
)
from p2w_rt.replay.derived import PassAborted, PassSettings, run_pass
from p2w_rt.schemas import LlmCall
from p2w_runtime.llm import LlmClient
from p2w_runtime.store import MemoryEventStore, open_store
from p2w_runtime.testing import HttpError, ScriptedLlm, Text, last_user_message
from tests.helpers.classify_builders import act_well, add_run, ask_well, builder, good_episode

MODEL = "scripted-model"


def analyst(request: dict) -> Text:
    """Flags the line that sets max_price=40 as a hallucination, citing its tag; nothing otherwise."""
    user = last_user_message(request)
    found = re.search(r"\[(E\d+)\][^\n]*max_price=40", user)
    if found is None:
        return Text(json.dumps({"labels": []}))
    label = {
        "label": "personalization_hallucination",
        "explanation": "filters by a price bound the user never gave",
        "evidence": [found.group(1), "E999"],
        "text": "max_price=40",
    }
    return Text(json.dumps({"labels": [label]}))


def classify(store: Any, server: ScriptedLlm) -> Any:
    """The llm classifier's pass over ``run``, its client built on first need."""
    return run_pass(
        CLASSIFIERS,
        store,
        "run",
        [LlmClassifier(PassSettings(model=MODEL))],
        llm=lambda: LlmClient(MODEL, base_url=server.base_url),
    )


async def _build(path: Path) -> dict[str, str]:
    bad = builder("run", "Alex_Garcia_B1")
    ask_well(bad)
    ids = act_well(bad, extra_param="&max_price=40", end="max_steps")
    async with open_store(path) as store:
        await add_run(store, "december", [good_episode("run", "Alex_Garcia_A1"), bad], run_id="run")
    return ids


async def test_labels_evidence_recorded_calls_and_cache(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "runs.db"
    ids = await _build(db)
    scripted_llm.handle_with(analyst)
    async with open_store(db) as store:
        first = await classify(store, scripted_llm)
        assert (first.classified, first.failed, first.cached) == (2, 0, 0)
        assert len(scripted_llm.chat_requests) == 2
        request = scripted_llm.chat_requests[0]
        assert "personalization_hallucination:" in request["messages"][0]["content"]
        assert "Expected preferences:\n  1. 32x32" in request["messages"][1]["content"]

        clean, flagged = (o.classification for o in first.outcomes)
        assert clean.labels == []
        assert [label.label for label in flagged.labels] == ["personalization_hallucination", "max_steps"]
        hallucination = flagged.labels[0]
        assert hallucination.evidence.event_ids == [ids["results"]], "tags map to event ids, unknown tags dropped"
        assert hallucination.evidence.text == "max_price=40"
        assert hallucination.explanation == "filters by a price bound the user never gave"
        assert flagged.labels[1].evidence.event_ids == [ids["finished"]], "the end reason comes from the log"

        calls = [e.decode() async for e in store.read_stream(classification_stream("run")) if e.type == "llm.call"]
        assert len(calls) == 2
        assert all(isinstance(c.payload, LlmCall) and c.payload.role == "classifier" for c in calls)
        # the two episodes are classified concurrently, so their calls may be stored in either order
        assert sorted(c.causation_id == ids["finished"] for c in calls) == [False, True]

        second = await classify(store, scripted_llm)
        assert (second.classified, second.cached) == (0, 2)
        assert len(scripted_llm.chat_requests) == 2, "a cached pass makes no request"
        assert len(await read_classifications(store, "run")) == 2


async def test_malformed_answers_are_a_failed_classification_retried_next_time(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    db = tmp_path / "runs.db"
    async with open_store(db) as store:
        await add_run(store, "december", [good_episode("run", "Alex_Garcia_A1")], run_id="run")
        scripted_llm.handle_with(lambda _: Text('{"labels": [{"label": "made_up_error"}]}'))
        failed = await classify(store, scripted_llm)
        assert failed.failed == 1
        (outcome,) = failed.outcomes
        assert outcome.classification.status == "failed" and "ClassifierAnswer" in (outcome.classification.error or "")
        assert len(scripted_llm.chat_requests) == 3, "asked, then repaired twice"

        scripted_llm.handle_with(lambda _: Text('{"labels": []}'))
        retried = await classify(store, scripted_llm)
        assert (retried.classified, retried.cached) == (1, 0)
        assert len(scripted_llm.chat_requests) == 4


def test_cli_llm_classifier_uses_the_endpoint_and_reports_cached(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "runs.db"
    asyncio.run(_build(db))
    scripted_llm.handle_with(analyst)
    args = [
        "--db",
        str(db),
        "classify",
        "december",
        "--classifier",
        "llm",
        "--model",
        MODEL,
        "--base-url",
        scripted_llm.base_url,
    ]
    first = CliRunner().invoke(main, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert "Alex_Garcia_B1  personalization_hallucination, max_steps" in first.stdout
    second = CliRunner().invoke(main, args, catch_exceptions=False)
    assert "cached Alex_Garcia_B1" in second.stdout and "classified 0, cached 2" in second.stderr
    assert len(scripted_llm.chat_requests) == 2


async def test_a_rejected_request_stops_the_batch_and_keeps_its_recorded_call(scripted_llm: ScriptedLlm) -> None:
    async with MemoryEventStore() as store:
        await add_run(store, "december", [good_episode("run", "Alex_Garcia_A1")], run_id="run")
        scripted_llm.handle_with(lambda _: HttpError(401, "Incorrect API key provided"))
        with pytest.raises(PassAborted, match="Incorrect API key provided.*run/Alex_Garcia_A1"):
            await classify(store, scripted_llm)
        events = [e.decode() async for e in store.read_stream(classification_stream("run"))]
        assert [e.type for e in events] == ["llm.call", "streams.sealed"]  # what the stopped pass wrote is sealed
        assert events[0].payload.error == "HTTP 401: Incorrect API key provided"
        assert await read_classifications(store, "run") == []
