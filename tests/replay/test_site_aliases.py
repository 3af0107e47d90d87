"""Site names of the real task texts that are not domains (``Google Flights.com``, ``Map.com``,
``shopping.google.com``) earn the website point where agents actually land; users add aliases with
``--site-alias NAME=DOMAIN`` or a file."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.matching import SITE_ALIASES, expected_hosts, mentions_site, on_site, site_aliases, site_hosts
from p2w_rt.replay.persona2web import RubricRulesJudge
from p2w_rt.schemas import GroundTruth, MemoryEntry
from p2w_runtime.data import load_tasks
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import add_run
from tests.helpers.paths import DATA

TASKS = DATA / "persona2web" / "tasks"
LANDINGS = {
    "Google Flights.com": "https://www.google.com/travel/flights/search?tfs=CBwQAhoeEgoyMDI2LTEyLTA1agcIARIDREVO",
    "Map.com": "https://www.google.com/maps/dir/Ocean+Beach,+San+Diego/Downtown+San+Diego/",
    "shopping.google.com": "https://www.google.com/search?q=low+sodium+chicken+soup&tbm=shop",
}
"""Where an agent lands for each task-text name that is not a domain anyone visits."""
NOT_THERE = {
    "Google Flights.com": "https://www.google.com/search?q=flights+DEN+to+NYC",
    "Map.com": "https://www.google.com/search?q=route+to+downtown",
    "shopping.google.com": "https://www.google.com/search?q=low+sodium+chicken+soup",
}
"""A plain Google search is not the named Google product."""
DOMAIN = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+")


@pytest.fixture(scope="module")
def real_websites() -> dict[str, str]:
    """Every website alternative of the 150 real query sets -> one query set naming it."""
    found: dict[str, str] = {}
    for query_set, truth in load_tasks(TASKS).ground_truths.items():
        for site in truth.websites:
            found.setdefault(site, query_set)
    return found


def test_every_site_name_of_the_450_real_tasks_is_a_domain_a_typo_or_an_alias(real_websites: dict[str, str]) -> None:
    assert len(real_websites) == 69
    aliases = site_aliases(SITE_ALIASES)
    for site in real_websites:
        hosts = site_hosts(site)
        if site in SITE_ALIASES:
            assert aliases[hosts[0]], site
        else:  # a host as written (lower-cased), or the ``.com`` typo read without it
            assert DOMAIN.fullmatch(site.lower()) and hosts[0] == site.lower(), site
    not_domains = {s for s in real_websites if " " in s or s.lower().startswith(("shopping.google", "map."))}
    assert not_domains == set(SITE_ALIASES) == set(LANDINGS)


@pytest.mark.parametrize("site", sorted(LANDINGS))
def test_an_alias_puts_the_landing_page_on_the_site_and_a_plain_search_off_it(site: str) -> None:
    with_aliases = expected_hosts([site], site_aliases(SITE_ALIASES))
    assert on_site(LANDINGS[site], with_aliases) is not None
    assert on_site(NOT_THERE[site], with_aliases) is None
    assert on_site(LANDINGS[site], expected_hosts([site])) is None, "without the alias the point cannot be earned"


def test_alias_targets_match_path_segments_and_query_parameters() -> None:
    hosts = ("google.com/travel/flights", "google.com/search?tbm=shop")
    assert on_site("https://www.google.com/travel/flights", hosts) == "google.com/travel/flights"
    assert on_site("https://google.com/Travel/Flights/booking?x=1", hosts) == "google.com/travel/flights"
    assert on_site("https://www.google.com/travel/flightsfoo", hosts) is None
    assert on_site("https://www.google.com/travel/hotels", hosts) is None
    assert on_site("https://www.google.com/search?q=a&tbm=shop", hosts) == "google.com/search?tbm=shop"
    assert on_site("https://www.google.com/search?q=a&tbm=isch", hosts) is None


def test_a_written_name_with_spaces_is_mentioned_by_its_words_but_a_path_target_is_not_named_google() -> None:
    hosts = expected_hosts(["Google Flights.com"], site_aliases(SITE_ALIASES))
    found = mentions_site("She always books on Google Flights.", hosts)
    assert found is not None and found.by_name and found.snippet == "google flights"
    assert mentions_site("I search on google for everything", hosts) is None
    assert mentions_site("saved google.com/travel/flights in bookmarks", hosts).site == "google.com/travel/flights"


def _flight_episode(truth: GroundTruth) -> EpisodeBuilder:
    b = EpisodeBuilder("run", "Dakota_Taylor_A1", query="Find weekend flights from my home airport", ground_truth=truth)
    q = b.history_query("Where does the user book flights?", step=1)
    entry = MemoryEntry(timestamp="2024-05-01", type="web visit", object="DEN to JFK", website="Google Flights")
    b.retrieval(q, "Where does the user book flights?", [entry], step=1)
    b.observation(1, "https://www.bing.com/")
    b.action(1, "goto", "https://www.google.com/travel/flights")
    b.observation(2, LANDINGS["Google Flights.com"], "Google Flights")
    b.action(2, "stop", "DEN-JFK, Fri 5:10 pm")
    b.finish("answered", "DEN-JFK, Fri 5:10 pm", steps=2)
    return b


def test_the_real_google_flights_task_earns_both_website_points() -> None:
    truth = load_tasks(TASKS).ground_truths["Dakota_Taylor_A"]
    assert truth.websites == ["Google Flights.com"]
    t = _flight_episode(truth).trajectory()
    verdict = RubricRulesJudge(PassSettings()).score(t)
    assert verdict.points["web.retrieval"] == 5.0 and verdict.points["web.utilization"] == 5.0
    assert verdict.evidence["web.utilization"].text.startswith("https://www.google.com/travel/flights")


ACME = GroundTruth(website="Acme Air.com", websites=["Acme Air.com"], preferences=[])


@pytest.fixture
def acme_db(tmp_path: Path) -> Path:
    """A run whose task names ``Acme Air.com`` while the agent books on fly.example.org/acme."""
    db = tmp_path / "acme.db"
    b = EpisodeBuilder("acme", "Dakota_Taylor_A1", query="Book my usual flight", ground_truth=ACME)
    b.observation(1, "https://fly.example.org/acme/search?from=DEN")
    b.action(1, "stop", "booked")
    b.finish("answered", "booked", steps=1)

    async def make() -> None:
        async with open_store(db, create=True) as store:
            await add_run(store, "acme", [b], run_id="acme")

    asyncio.run(make())
    return db


def _p_web(db: Path, *extra: str) -> tuple[float, bool]:
    result = CliRunner().invoke(
        main, ["--db", str(db), "replay", "acme", "--judge", "rubric-rules", "--json", *extra], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.splitlines()[0])
    return row["points"]["web.utilization"], row["cached"]


def test_site_alias_option_and_file_earn_the_point_and_are_part_of_the_cache_key(acme_db: Path, tmp_path: Path) -> None:
    assert _p_web(acme_db) == (0.0, False)
    assert _p_web(acme_db, "--site-alias", "Acme Air.com=https://fly.example.org/acme/") == (5.0, False)
    assert _p_web(acme_db, "--site-alias", "acme air.com=fly.example.org/acme") == (5.0, True)
    aliases = tmp_path / "aliases.txt"
    aliases.write_text("# our carriers\nAcme Air.com = fly.example.org/acme  # booking site\n", encoding="utf-8")
    assert _p_web(acme_db, "--site-alias-file", str(aliases)) == (5.0, True)
    assert _p_web(acme_db, "--site-alias", "Acme Air.com=fly.example.org/other") == (0.0, False)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--site-alias", "Acme Air.com"), "--site-alias"),
        (("--site-alias", "Acme Air.com=not a domain"), "--site-alias"),
        (("--site-alias", "=fly.example.org"), "--site-alias"),
    ],
)
def test_a_bad_alias_is_one_line_naming_the_option(acme_db: Path, args: tuple[str, ...], named: str) -> None:
    result = CliRunner().invoke(main, ["--db", str(acme_db), "replay", "acme", "--judge", "rubric-rules", *args])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert named in result.stderr and ("expected NAME=DOMAIN" in result.stderr or "is not a domain" in result.stderr)


def test_a_bad_alias_file_line_is_named_with_its_line_number(acme_db: Path, tmp_path: Path) -> None:
    aliases = tmp_path / "aliases.txt"
    aliases.write_text("Acme Air.com=fly.example.org\n\nno equals sign here\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["--db", str(acme_db), "classify", "acme", "--site-alias-file", str(aliases)], catch_exceptions=False
    )
    assert result.exit_code == 2
    assert f"{aliases} line 3: expected NAME=DOMAIN, got 'no equals sign here'" in result.stderr
    assert "Traceback" not in result.output
