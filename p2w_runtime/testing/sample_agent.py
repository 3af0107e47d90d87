"""What a competent model would answer on the bundled sample tasks: the scripted LLM for tests, benchmarks and
the demo's example runs. It reads only what the agent's prompts show it, never our code's state.

After asking the history it searches the site with the user's filters, opens the right result and does what
the task asks (``_sample_steps``): adds the item to the cart, opens the reservation details, goes to checkout,
and stops there. ``slips`` make it err on chosen query sets, so two runs can differ the way two real runs do:
``drop_preference`` leaves the last filter out of the search, ``wrong_site`` shops on another demo site,
``no_history`` never asks the history, ``wrong_item`` opens the result listed after the right one,
``stops_early`` answers from the results page, ``blocked`` opens the final page by a typed URL and meets the
site's bot wall. A slip keyed by a task id (``Lena_Fischer_A1``, level 2) applies to that task only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from p2w_runtime.agent.prompts import GENERATOR_MARKER, PLANNER_MARKER, PRE_EXECUTION_MARKER, REWRITER_MARKER
from p2w_runtime.data import TaskSet
from p2w_runtime.demo.sites.catalog import SITES, SITES_BY_HOST
from p2w_runtime.testing._replies import Text, last_user_message, system_message
from p2w_runtime.testing._sample_page import Page, current_page
from p2w_runtime.testing._sample_steps import PageSlip, site_step
from p2w_runtime.testing._sample_wants import Wants

Slip = Literal["drop_preference", "wrong_site", "no_history", "wrong_item", "stops_early", "blocked"]

EXAMPLE_RUN_SLIPS: dict[str, dict[str, Slip]] = {
    "earlier": {
        "Marcus_Okafor_A": "wrong_site",
        "Tomas_Reyes_B": "no_history",
        "Marcus_Okafor_C": "wrong_item",
        "Lena_Fischer_A1": "stops_early",
        "Tomas_Reyes_A": "blocked",
    },
    "later": {"Marcus_Okafor_A": "wrong_site", "Priya_Raman_B1": "blocked"},
}
"""The slips of each bundled example run, by query set (both levels) or task id (that level only, so the most
ambiguous level fails more often, as in the paper): what ``scripts/make_example_runs.py`` records them with."""

_TASK = re.compile(r"^TASK: (.+)$", re.M)
_ASKED = re.compile(r"^- Q: (.+)$", re.M)
_STEP_LINE = re.compile(r"^\d+\. .+$", re.M)
_QUESTION = re.compile(r"^QUESTION: (.+)$", re.M)
_ENTRY_IDS = re.compile(r"^\[(\d+)\]", re.M)
LOCATION_QUESTION = "weather forecast searches for my city"


class SampleAgentScript:
    """Callable for ``ScriptedLlm.handle_with``: planner, generator, pre-execution and rewrite replies."""

    def __init__(self, tasks: TaskSet, checks: Mapping[str, dict[str, Any]], slips: Mapping[str, Slip] | None = None):
        self.checks = checks
        self.slips = dict(slips or {})
        self._by_intent = {t.intent.strip(): t for t in tasks}
        self._level0 = {t.query_set: t.intent for t in tasks if t.level == 0}
        self._task_ids = {(t.query_set, t.level): t.task_id for t in tasks}
        self._answers = {c["website_query"]: f"The user usually uses {c['website']}." for c in checks.values()}
        for check in checks.values():
            for pref in check["preferences"]:
                self._answers[pref["query"]] = f"From repeated behaviour: {pref['value']}."
        self._cities = {
            t.query_set: t.ground_truth.location.city
            for t in tasks
            if t.level == 0 and t.ground_truth and t.ground_truth.location and _location_aware(checks, t.query_set)
        }

    @staticmethod
    def knows(request: dict[str, Any]) -> bool:
        """Whether ``request`` is one of the own agent's calls (its system prompt names the role)."""
        system = system_message(request)
        return any(m in system for m in (PLANNER_MARKER, GENERATOR_MARKER, PRE_EXECUTION_MARKER, REWRITER_MARKER))

    def __call__(self, request: dict[str, Any]) -> Text:
        system, user = system_message(request), last_user_message(request)
        if PLANNER_MARKER in system:
            return Text(self._plan(system, user))
        if GENERATOR_MARKER in system:
            return Text(self._generate(user))
        if PRE_EXECUTION_MARKER in system:
            return Text(self._pre_execution(user))
        if REWRITER_MARKER in system:
            return Text(self._rewrite(user))
        return Text("I cannot help with that.")

    def _task(self, user: str) -> tuple[str, int]:
        """(query set, level) of the task the prompt shows; a rewritten task maps to its level-0 text."""
        text = _TASK.search(user).group(1).strip()  # type: ignore[union-attr]  # every prompt shows the task
        task = self._by_intent.get(text)
        if task is None:
            raise KeyError(f"sample script: unknown task text {text[:80]!r}")
        return task.query_set, task.level

    def _slip(self, query_set: str, level: int) -> Slip | None:
        """The slip of this task: one keyed by its task id (this level only), else by its query set."""
        return self.slips.get(self._task_ids[query_set, level], self.slips.get(query_set))

    def _questions(self, query_set: str) -> list[str]:
        check = self.checks[query_set]
        location = [LOCATION_QUESTION] if query_set in self._cities else []
        return [check["website_query"], *(p["query"] for p in check["preferences"]), *location]

    def _plan(self, system: str, user: str) -> str:
        query_set, level = self._task(user)
        slip = self._slip(query_set, level)
        asked = _ASKED.findall(user)
        if "History access is enabled" in system and level > 0 and slip != "no_history":
            pending = [q for q in self._questions(query_set) if q not in asked]
            if pending:
                thought = "The task depends on the user's habits; I ask their history."
                return f"Thought: {thought}\nAction: ```memory_access [{pending[0]}]```"
        target = self._target(query_set, slip)
        site = urlsplit(target).hostname
        page = current_page(user)
        if page is not None and page.host == site:
            thought, action = self._on_site(page, user, slip)
            return f"Thought: {thought}\nAction: ```{action}```"
        thought = f"I search {site} with the user's preferences: {self._applied(query_set, slip)}."
        return f"Thought: {thought}\nAction: ```goto [{target}]```"

    @staticmethod
    def _on_site(page: Page, user: str, slip: Slip | None) -> tuple[str, str]:
        """A step on the searched site, from the page and what the prompt says above it (task, history, steps)."""
        known = user[: user.index("CURRENT PAGE (step ")]
        task = _TASK.search(known).group(1)  # type: ignore[union-attr]  # every prompt shows the task
        steps = _STEP_LINE.findall(known.partition("PREVIOUS STEPS:")[2])
        on_page: PageSlip | None = slip if slip in get_args(PageSlip) else None  # type: ignore[assignment]
        return site_step(page, Wants(task, known), on_page, steps[-1] if steps else "")

    def _applied(self, query_set: str, slip: Slip | None) -> str:
        """The preference values the planner says it applies (a dropped one is not mentioned)."""
        values = [p["value"] for p in self.checks[query_set]["preferences"]]
        if slip == "drop_preference":
            values = values[:-1]
        if query_set in self._cities:
            values.append(f"delivery near {self._cities[query_set]}")
        return ", ".join(values)

    def _target(self, query_set: str, slip: Slip | None) -> str:
        url = self.checks[query_set]["target_url"]
        parts = urlsplit(url)
        if slip == "drop_preference" and "&" in parts.query:
            return urlunsplit(parts._replace(query=parts.query.rsplit("&", 1)[0]))
        if slip == "wrong_site":  # the same words on another shop, without the user's filters
            other = next(s.host for s in SITES if s.kind == "shop" and s.host != parts.hostname)
            words = next((p for p in parts.query.split("&") if p.startswith("q=")), "")
            return urlunsplit(parts._replace(netloc=other, query=words))
        return url

    def _generate(self, user: str) -> str:
        question = _QUESTION.search(user).group(1).strip()  # type: ignore[union-attr]  # generator prompts ask one
        ids = _ENTRY_IDS.findall(user)[:3]
        if not ids:
            return "Answer: The history does not say.\nCited: none"
        if question == LOCATION_QUESTION:
            return self._locate(user, ids)
        answer = self._answers.get(question, "The history does not say.")
        return f"Answer: {answer}\nCited: {', '.join(ids)}"

    def _locate(self, user: str, ids: list[str]) -> str:
        """The city the user's local searches name most often, read off the entries shown."""
        counts = {city: user.count(city) for city in set(self._cities.values())}
        city, seen = max(counts.items(), key=lambda item: item[1])
        if not seen:
            return "Answer: The history does not say where the user lives.\nCited: none"
        answer = f"The user's local searches are for {city}, so they live in or near {city}."
        return f"Answer: {answer}\nCited: {', '.join(ids)}"

    def _pre_execution(self, user: str) -> str:
        query_set, level = self._task(user)
        if level == 0 or self._slip(query_set, level) == "no_history":
            return "Queries: none"
        return "Queries:\n" + "\n".join(f"- {q}" for q in self._questions(query_set)[:5])

    def _rewrite(self, user: str) -> str:
        query_set, _ = self._task(user)
        return f"Task: {self._level0[query_set]}"


def _location_aware(checks: Mapping[str, dict[str, Any]], query_set: str) -> bool:
    site = SITES_BY_HOST.get(checks.get(query_set, {}).get("website", ""))
    return site is not None and site.location_aware
