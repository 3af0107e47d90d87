"""What a competent model would answer Browser-Use on the bundled sample tasks, in Browser-Use's structured output
(``AgentOutput``: thinking, evaluation_previous_goal, memory, next_goal, action list). It reads only Browser-Use's
prompt: the task in ``<user_request>``, the history answers in ``<agent_history>``, the page in
``<browser_state>``, and whether the ``memory_access`` action is offered (the response format's schema).

Like the own agent's script (``sample_agent``): ask the history each question the task depends on (levels 1-2,
when the action is offered), go to the site's search with the user's filters, open the first result, then stop
with an answer naming the page. The memory answers come from ``SampleAgentScript`` (the generator's prompt is the
own agent's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from p2w_runtime.data import TaskSet
from p2w_runtime.testing._replies import Text, last_user_message
from p2w_runtime.testing.sample_agent import SampleAgentScript

BROWSER_USE_FORMAT = "agent_output"
"""The name Browser-Use gives its structured output (``response_format.json_schema.name``)."""
_TASK = re.compile(r"<user_request>\s*(.+?)\s*</user_request>", re.S)
_ASKED = re.compile(r"History answer for '(.+?)':")
_TAB = re.compile(r"^Tab \w+: (\S+)", re.M)
_RESULTS = re.compile(r"^\d+ results? for .+$", re.M)
_LINK = re.compile(r"^\s*\*?\[(\d+)\]<a />\s*\n\s*(.+)$", re.M)
_ADD = re.compile(r"^\s*\*?\[(\d+)\]<button[^\n]*/>\s*\n\s*Add to cart\s*$", re.M)


def is_browser_use(request: Mapping[str, Any]) -> bool:
    """A Browser-Use planner call: it asks for its ``agent_output`` structured format."""
    response_format = request.get("response_format")
    return isinstance(response_format, dict) and response_format.get("json_schema", {}).get("name") == (
        BROWSER_USE_FORMAT
    )


class BrowserUseSampleScript:
    """Callable for ``ScriptedLlm.handle_with``: Browser-Use planner calls, and the generator of its memory action."""

    def __init__(self, tasks: TaskSet, checks: Mapping[str, dict[str, Any]]) -> None:
        self.own = SampleAgentScript(tasks, checks)
        self.checks = checks
        self._by_intent = {t.intent.strip(): t for t in tasks}

    def __call__(self, request: dict[str, Any]) -> Text:
        if not is_browser_use(request):
            return self.own(request)
        user = last_user_message(request)
        found = _TASK.search(user)
        task = self._by_intent.get(found.group(1).strip()) if found else None
        if task is None:
            raise KeyError(f"browser-use script: unknown task {found.group(1)[:80] if found else '(none)'!r}")
        check = self.checks[task.query_set]
        offered = "memory_access" in json.dumps(request["response_format"])
        asked = set(_ASKED.findall(user))
        questions = [check["website_query"], *(p["query"] for p in check["preferences"])]
        pending = [q for q in questions if q not in asked]
        if offered and task.level > 0 and pending:
            return _reply(
                "The task depends on the user's habits; I ask their history.", {"memory_access": {"query": pending[0]}}
            )
        target = check["target_url"]
        here = _TAB.findall(user)
        url = here[0] if here else ""
        site = urlsplit(target).hostname
        if urlsplit(url).hostname != site:
            values = ", ".join(p["value"] for p in check["preferences"])
            return _reply(f"I search {site} with the user's preferences: {values}.", {"navigate": {"url": target}})
        page = user.partition("<browser_state>")[2]
        listed = _RESULTS.search(page)
        if urlsplit(url).path == "/search" and listed is not None:
            results = _LINK.findall(page[listed.end() :])
            if results:
                index, text = results[0]
                return _reply(f"The first result fits: {text.strip()}.", {"click": {"index": int(index)}})
        add = _ADD.search(page)
        if add is not None and "Cart (0)" in page:
            return _reply("This is the item; I add it to the cart.", {"click": {"index": int(add.group(1))}})
        return _reply("This is the page the task asks for.", {"done": {"text": f"Done on {url}", "success": True}})


def _reply(thought: str, action: dict[str, Any]) -> Text:
    body = {
        "thinking": thought,
        "evaluation_previous_goal": "The previous step did what I meant.",
        "memory": "",
        "next_goal": thought,
        "action": [action],
    }
    return Text(json.dumps(body))
