"""Every producer's cache key covers every setting its output depends on (issue 13).

Built from the config models and the settings dataclass, not from a list kept by hand: a new config field or
a new user setting is covered the day it is added, or this test fails.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from p2w_rt.replay.agenticshop import SHOP_JUDGES as SHOP_JUDGE_CLASSES
from p2w_rt.replay.agenticshop import ShopSettings
from p2w_rt.replay.classify import LlmClassifier, RulesClassifier
from p2w_rt.replay.derived import Family, PassSettings, ProduceContext, Producer, families
from p2w_rt.replay.judges import LlmConfig
from p2w_rt.replay.matching import site_aliases
from p2w_rt.replay.persona2web import SiteSettings
from p2w_rt.replay.retrieval_cf import RetrievalSettings
from p2w_rt.replay.webarena import WebArenaSettings
from p2w_rt.schemas import GroundTruth, Location, MemoryEntry
from p2w_runtime.data import load_profiles
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.retrieval import HistoryRetriever, load_embedder
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.paths import DATA

WEBARENA = DATA / "webarena" / "test.raw.json"
PROFILES = DATA / "agenticshop" / "clothing_user_profile.json"
HISTORY = DATA / "retrieval_cf" / "history"
"""A memory bank for the episode's persona, for the counterfactual retrieval to search."""
SETTINGS = PassSettings(
    plugins=(SiteSettings(), WebArenaSettings(configs=str(WEBARENA)), ShopSettings(profiles=str(PROFILES)))
)
SHOP_JUDGES = {cls.id for cls in SHOP_JUDGE_CLASSES}

ACME = GroundTruth(
    website="Acme Air.com",
    websites=["Acme Air.com"],
    preferences=["window seat", "under $300"],
    location=Location(city="Denver", state="CO", zip="80202", raw="Denver, CO 80202"),
)
CHANGED: dict[str, Any] = {
    "model": "another-model",
    "temperature": 0.7,
    "params": {"seed": 7},
    "sample": 1,
    "SiteSettings.location_sites": (*SETTINGS.of(SiteSettings).location_sites, "fly.example.org"),
    "SiteSettings.site_aliases": site_aliases({"Acme Air.com": ["fly.example.org/acme"]}),
    "WebArenaSettings.configs": str(WEBARENA),  # the same tasks from another copy: only their eval blocks are hashed
    "WebArenaSettings.site_urls": {"gitlab": "http://gitlab.example:8023"},
    "ShopSettings.profiles": str(PROFILES),  # the same profiles from another copy: only each task's is hashed
}
"""One change of each user setting: a ``PassSettings`` field, or ``Type.field`` of a plugin's settings."""


def with_setting(settings: PassSettings, setting: str, value: Any) -> PassSettings:
    """``settings`` with one common field, or one field of a plugin's settings (``Type.field``), set to ``value``."""
    owner, _, name = setting.rpartition(".")
    if not owner:
        return dataclasses.replace(settings, **{name: value})
    plugins = [dataclasses.replace(p, **{name: value}) if type(p).__name__ == owner else p for p in settings.plugins]  # type: ignore[type-var]
    return dataclasses.replace(settings, plugins=tuple(plugins))


"""One change of each user setting (``PassSettings`` field)."""


@functools.cache
def retriever() -> HistoryRetriever:
    return HistoryRetriever(HISTORY, load_embedder(None))


def family_settings(family: Family[Any, Any, Any, Any], settings: PassSettings) -> Any:
    """What a family's producers are built from: the user's settings, with a retriever for counterfactuals."""
    return RetrievalSettings(retriever(), sites=settings) if family.kind == "retrieval" else settings


def producers(settings: PassSettings = SETTINGS) -> list[Producer[Any, Any, Any]]:
    return [cls(family_settings(family, settings)) for family in families() for cls in family.producers]


def trajectory() -> Trajectory:
    """An episode on fly.example.org/acme, where an alias and a location-aware site change what is judged."""
    b = EpisodeBuilder("run", "Dakota_Taylor_A1", query="Book my usual flight", ground_truth=ACME)
    q = b.history_query("Which airline does the user fly?", step=1)
    entry = MemoryEntry(timestamp="2024-05-01", type="booking", object="DEN to JFK", website="fly.example.org/acme")
    b.retrieval(q, "Which airline does the user fly?", [entry], step=1)
    b.observation(1, "https://fly.example.org/acme/search?from=Denver")
    b.action(1, "type", "12", "window seat under $300")
    b.action(2, "stop", "booked a window seat for $280")
    b.finish("answered", "booked a window seat for $280", steps=2)
    return b.trajectory()


def changed_values(value: Any) -> Iterator[Any]:
    """Candidate changes of one JSON value, each a different valid-looking value of the same shape."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int | float):
        yield value + 1
    elif isinstance(value, str):
        yield value + "-changed"
    elif value is None:
        yield from ("changed", 0.5, ["changed"])
    elif isinstance(value, list):
        yield [*value, *(value[:1] or ["changed"])]
    elif isinstance(value, dict):
        for new in (["changed"], "changed", 1):
            yield {**value, "changed": new}


def leaf_changes(config: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field path, config JSON with that one field changed), recursing into nested models (``redundancy``)."""
    for name, value in config.items():
        if isinstance(value, dict) and value and all(not isinstance(v, list) for v in value.values()):
            for path, nested in leaf_changes(value):
                yield f"{name}.{path}", {**config, name: nested}
        for new in changed_values(value):
            yield name, {**config, name: new}


def reconfigure(producer: Producer[Any, Any, Any], data: dict[str, Any]) -> Producer[Any, Any, Any] | None:
    """The same producer with another config."""
    try:
        config = type(producer.config).model_validate(data)
    except ValidationError:
        return None  # not a value this field takes; another candidate is
    other = copy.copy(producer)
    other.config = config
    return other


@pytest.mark.parametrize("producer", producers(), ids=lambda p: f"{p.kind}-{p.id}")
def test_changing_any_config_field_changes_the_cache_key(producer: Producer[Any, Any, Any]) -> None:
    t = trajectory()
    base = producer.config.model_dump(mode="json")
    assert isinstance(producer.config, BaseModel) and base, "a typed, non-empty config"
    key = producer.cache_key(t)
    covered: set[str] = set()
    for path, data in leaf_changes(base):
        other = reconfigure(producer, data)
        if other is None or other.config.model_dump(mode="json") == base:
            continue
        assert other.cache_key(t) != key, f"{producer.id}: changing {path} left the cache key as it was"
        assert other.claim("run") != producer.claim("run"), f"{producer.id}: {path} is not in the pass claim"
        covered.add(path.split(".")[0])
    assert covered == set(base), f"{producer.id}: fields no change could be tried on: {set(base) - covered}"


def output(producer: Producer[Any, Any, Any], t: Trajectory) -> Any:
    """What the producer's result depends on: the request an LLM producer sends, or a rules producer's verdict."""
    request = getattr(producer, "messages", None)  # the LLM producers' request builder
    if request is not None:
        return request(t)[0], producer.config.model, producer.config.params

    async def no_blobs(blob: str) -> bytes:
        raise AssertionError(f"{producer.id} read blob {blob}: this trajectory records none")

    return asyncio.run(producer.produce(t, ProduceContext(get_blob=no_blobs)))


def test_every_user_setting_has_a_change_to_try() -> None:
    """Common settings, and every field of every registered plugin's settings model (read from the registry)."""
    models = {type(made) for family in families() for made in family.settings({})}
    assert models == {type(p) for p in SETTINGS.plugins}, "SETTINGS holds one of each plugin's settings"
    common = {f.name for f in dataclasses.fields(PassSettings)} - {"plugins"}
    assert all(dataclasses.is_dataclass(m) for m in models), "a plugin's settings model is a dataclass"
    of_plugins = {f"{m.__name__}.{f.name}" for m in models for f in dataclasses.fields(m)}  # type: ignore[arg-type]
    assert common | of_plugins == set(CHANGED)


@pytest.mark.parametrize("setting", sorted(CHANGED))
def test_a_setting_that_changes_a_result_changes_its_cache_key(setting: str) -> None:
    t = trajectory()
    changed = with_setting(SETTINGS, setting, CHANGED[setting])
    for before, after in zip(producers(), producers(changed), strict=True):
        if before.id == "webarena" or before.id in SHOP_JUDGES:
            continue  # their output needs a WebArena final state / page captures; keys covered field by field above
        if output(before, t) != output(after, t):
            assert after.cache_key(t) != before.cache_key(t), f"{before.kind} {before.id}: {setting} changes the result"


def test_the_llm_classifier_prompt_depends_on_the_site_aliases_and_so_does_its_key() -> None:
    """The drift issue 13 found: the alias decides the expected site, so whether the prompt names a location."""
    t = trajectory()
    located = with_setting(SETTINGS, "SiteSettings.location_sites", ("fly.example.org",))
    aliased = with_setting(located, "SiteSettings.site_aliases", CHANGED["SiteSettings.site_aliases"])
    before, after = LlmClassifier(located), LlmClassifier(aliased)
    assert "Expected location: Denver, CO 80202" not in before.messages(t)[0][1]["content"]
    assert "Expected location: Denver, CO 80202" in after.messages(t)[0][1]["content"]
    assert after.cache_key(t) != before.cache_key(t)


def test_rules_results_change_with_the_settings_the_test_changes() -> None:
    """The changes above are not idle: the alias moves a rules verdict, so the key test has something to check."""
    t = trajectory()
    aliased = with_setting(SETTINGS, "SiteSettings.site_aliases", CHANGED["SiteSettings.site_aliases"])
    assert output(RulesClassifier(SETTINGS), t) != output(RulesClassifier(aliased), t)


PINNED_SETTINGS = PassSettings(
    model="gpt-5-mini",
    temperature=0.2,
    plugins=(
        SiteSettings(
            location_sites=("amazon.com", "resy.com"), site_aliases={"acmeair.com": ("fly.example.org/acme",)}
        ),
        WebArenaSettings(configs=str(WEBARENA), site_urls={"gitlab": "http://gitlab.example:8023"}),
        ShopSettings(profiles=str(PROFILES)),
    ),
)
BEFORE_THE_BASE = {
    ("judge", "rubric-rules"): "7f2dddbb54eaa8468b7cd6e017b065670b7232887b747cd78a35ce15a207faae",
    ("judge", "rubric-llm"): "e5a61c054222c26b0027bc099673dbf72459bd47037d1aaf6aedcefe6f8d654f",
    ("judge", "action-wise"): "bbf8847910a35da4899c5a021fca6aaa8ed5ceec4246840b4037f05ccdd6384f",
    ("judge", "outcome-based"): "660c541ea5a21ee702788502b0dada2e84f35ca6b7147686a07458148d441408",
    ("judge", "action-wise-rules"): "345b8f15b674794fd81454697caafc97b68f9cd6a93c71578d47e252d7fd0faf",
    ("judge", "outcome-based-rules"): "fc932bf2881447767aa4ad749dc751c51f182555096bf4f285b9e3f5d79022d1",
    ("judge", "webarena"): "387728e7e4a15b8773059d3a36b05f3d8be13c9cbfbd019fab519ef2a824acc3",
    ("classifier", "rules"): "18e533979a1c84e29b09238ce4ad81a2ab522f84d02b20d59af331f855fb90d1",
}
"""Config hashes as the judges and classifiers computed them before the ``Producer`` base (commit 785bca9)."""
LLM_CLASSIFIER_BEFORE = "696d618cc959d7b10331be8c8e555cf011704a19ed6b3a5f06733f5191b25583"


def test_cached_results_in_old_databases_stay_valid() -> None:
    """The base hashes the same canonical config as before, so every cached judgment is still a hit; only the
    llm classifier's key changed, on purpose: it now includes the site aliases (docs/design/classification.md)."""
    for producer in producers(PINNED_SETTINGS):
        if producer.id in SHOP_JUDGES or producer.kind == "retrieval":
            continue  # added after the base: no result of theirs was ever keyed the old way
        task = "1" if producer.id == "webarena" else "Dakota_Taylor_A1"
        digest = producer.config_hash(task)
        if (producer.kind, producer.id) == ("classifier", "llm"):
            assert digest != LLM_CLASSIFIER_BEFORE
        else:
            assert digest == BEFORE_THE_BASE[(producer.kind, producer.id)], producer.id


def test_every_sample_of_an_llm_judge_has_its_own_key_and_the_first_keeps_the_old_one() -> None:
    """``replay --samples N``: sample n is another cached judgment (its own call); sample 0 is what was cached."""
    t = trajectory()
    for before, after in zip(producers(), producers(dataclasses.replace(SETTINGS, sample=1)), strict=True):
        assert isinstance(before.config, LlmConfig) or not before.uses_llm, f"{before.id} calls a model"
        if isinstance(before.config, LlmConfig):  # webarena's fuzzy match too, when a task has one
            assert after.cache_key(t) != before.cache_key(t), before.id
            assert "sample" not in before.config.model_dump(mode="json"), before.id
        else:
            assert after.cache_key(t) == before.cache_key(t), f"{before.id} judges once, whatever the sample"


def test_a_changed_checklist_changes_the_shop_judges_keys(tmp_path: Path) -> None:
    """The profiles are per-task inputs: the task's checklist is hashed, not the path of its file."""
    profiles = json.loads(PROFILES.read_text())
    task = load_profiles(PROFILES)[0].task_id
    profiles[0]["check_list"]["brand_preferences"] = [*profiles[0]["check_list"]["brand_preferences"], "Brand is X"]
    edited = tmp_path / "clothing_user_profile.json"
    edited.write_text(json.dumps(profiles))
    moved = tmp_path / "moved" / PROFILES.name
    moved.parent.mkdir()
    moved.write_text(PROFILES.read_text())
    for cls in SHOP_JUDGE_CLASSES:
        original = cls(SETTINGS).config_hash(task)
        assert cls(with_setting(SETTINGS, "ShopSettings.profiles", str(moved))).config_hash(task) == original
        changed = cls(with_setting(SETTINGS, "ShopSettings.profiles", str(edited))).config_hash(task) != original
        assert changed == cls.needs_profile, cls.id
