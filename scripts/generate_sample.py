"""Write the bundled sample personas: memory banks, Persona2Web task files and the per-set checks.

Deterministic (seeded, no LLM): running it twice writes the same bytes. Usage::

    python scripts/generate_sample.py [--out p2w_runtime/demo/sample]

Output: ``history/{First}_{Last}.json`` (``{"memory_bank": [...]}``, one year of entries),
``tasks/personalization_{1,2,3}/{First}_{Last}_{Set}{n}.json`` (folder 3 = level 0, 2 = level 1,
1 = level 2) and ``checks.json`` (per query set: the demo page that satisfies it, and the history
query + revealing phrases per preference, which the tests use).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import shutil
import sys
from pathlib import Path

from sample_personas import PERSONAS
from sample_spec import GENERIC, Persona, QuerySet

from p2w_runtime.data import ground_truth
from p2w_runtime.demo.sites.catalog import SEARCH_HOST, base_url, start_url

YEAR = 2024
FOLDER_OF_LEVEL = {0: 3, 1: 2, 2: 1}
_VARIANT = re.compile(r"\{([^{}]*\|[^{}]*)\}")
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "p2w_runtime" / "sample"


def expand(template: str, rng: random.Random, city: str) -> str:
    """Fill ``{city}`` and pick one of each ``{a|b|c}``."""
    return _VARIANT.sub(lambda m: rng.choice(m.group(1).split("|")), template.replace("{city}", city))


def _timestamp(rng: random.Random, day: int) -> str:
    moment = dt.datetime(YEAR, 1, 1) + dt.timedelta(days=day, seconds=rng.randrange(7 * 3600, 23 * 3600))
    return moment.isoformat()


def history(persona: Persona) -> list[dict[str, str]]:
    """Signals spread evenly over the year, buried in 300-500 entries of everyday browsing."""
    rng = random.Random(f"p2w-sample/history/{persona.name}")
    entries: list[tuple[str, dict[str, str]]] = []
    for query_set in persona.sets:
        signals = query_set.signals
        for i, (kind, text, site) in enumerate(signals):
            day = int((i + rng.random()) * 365 / len(signals))
            entries.append((_timestamp(rng, day), {"type": kind, "object": text, "website": site}))
    target = rng.randint(330, 470)
    seen = {entry["object"] for _, entry in entries}
    while len(entries) < target:
        pool = persona.interests if rng.random() < 0.6 else GENERIC
        kind, template, site = rng.choice(pool)
        text = expand(template, rng, persona.city)
        if text in seen and rng.random() < 0.8:
            continue  # everyday browsing repeats, but not that often
        seen.add(text)
        entries.append((_timestamp(rng, rng.randrange(365)), {"type": kind, "object": text, "website": site}))
    entries.sort(key=lambda pair: (pair[0], pair[1]["object"]))
    return [{"timestamp": ts, **entry} for ts, entry in entries]


def _location(persona: Persona) -> str:
    return f"({persona.city}, {persona.state} {persona.zip})"


def intents(persona: Persona, query_set: QuerySet) -> dict[int, str]:
    """The three ambiguity levels; level 0 carries the ground truth in Persona2Web's ``At <site>, ...`` form."""
    return {
        0: f"Query: At {query_set.site}, {query_set.level0} {_location(persona)}",
        1: f"Query: {query_set.level1}",
        2: f"Query: {query_set.level2}",
    }


def task_file(persona: Persona, query_set: QuerySet, level: int, intent: str) -> dict[str, object]:
    return {
        "sites": [SEARCH_HOST],
        "task_id": f"{persona.name}_{query_set.set_id}{FOLDER_OF_LEVEL[level]}",
        "require_login": False,
        "storage_state": None,
        "start_url": start_url(),
        "geolocation": None,
        "intent": intent,
        "require_reset": False,
    }


def check(persona: Persona, query_set: QuerySet) -> dict[str, object]:
    return {
        "persona": persona.name,
        "website": query_set.site,
        "website_query": query_set.website_query,
        "target_url": base_url(query_set.site) + query_set.target,
        "preferences": [{"value": p.value, "query": p.query, "cues": list(p.cues)} for p in query_set.prefs],
    }


def _validate(persona: Persona, query_set: QuerySet, level0: str) -> None:
    """The level-0 text must parse back to exactly the site, preferences and location the spec intends."""
    truth = ground_truth(level0.removeprefix("Query: "))
    expected = [p.value for p in query_set.prefs]
    if truth.website != query_set.site or truth.preferences != expected or truth.location is None:
        raise SystemExit(f"{persona.name}_{query_set.set_id}: level-0 parses as {truth}, expected {expected}")
    for level_text in (query_set.level1, query_set.level2):
        if query_set.site in level_text:
            raise SystemExit(f"{persona.name}_{query_set.set_id}: a masked level names the website")


def _dump(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def exact_match_ratio(banks: dict[str, list[dict[str, str]]], checks: dict[str, dict]) -> tuple[int, int]:
    """(task, preference) pairs whose value appears verbatim (case-insensitive) in the persona's history."""
    hits = total = 0
    for entry in checks.values():
        objects = [e["object"].lower() for e in banks[entry["persona"]]]
        for pref in entry["preferences"]:
            total += 1
            hits += any(pref["value"].lower() in obj for obj in objects)
    return hits, total


def generate(out: Path) -> tuple[dict[str, list[dict[str, str]]], dict[str, dict]]:
    for sub in ("history", "tasks"):
        shutil.rmtree(out / sub, ignore_errors=True)
    banks, checks = {}, {}
    for persona in PERSONAS:
        banks[persona.name] = history(persona)
        _dump(out / "history" / f"{persona.name}.json", {"memory_bank": banks[persona.name]})
        for query_set in persona.sets:
            texts = intents(persona, query_set)
            _validate(persona, query_set, texts[0])
            for level, intent in texts.items():
                folder = out / "tasks" / f"personalization_{FOLDER_OF_LEVEL[level]}"
                data = task_file(persona, query_set, level, intent)
                _dump(folder / f"{data['task_id']}.json", data)
            checks[f"{persona.name}_{query_set.set_id}"] = check(persona, query_set)
    _dump(out / "checks.json", checks)
    return banks, checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="folder to write into; its history/ and tasks/ are replaced"
    )
    args = parser.parse_args(argv)
    banks, checks = generate(args.out)
    hits, total = exact_match_ratio(banks, checks)
    sizes = ", ".join(f"{name} {len(bank)}" for name, bank in banks.items())
    print(f"wrote {len(banks)} personas ({sizes} entries), {3 * len(checks)} task files to {args.out}")
    print(f"preference values found verbatim in history: {hits}/{total} = {100 * hits / total:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
