"""Run the public Persona2Web Browser-Use runner offline: demo sites, a scripted model, the sample personas.

Run with p2w-rt's virtualenv (it serves the demo sites and the scripted OpenAI-compatible model); the runner
itself runs in a separate virtualenv holding browser-use 0.11.2 with the fork's files laid over it:

    python run_offline.py RUNNER_DIR RUNNER_PYTHON WORK_DIR

RUNNER_DIR holds the fork's ``agent_runner.py`` (outside the fork's folder, whose partial ``browser_use/`` would
shadow the installed one; README.md says how it was set up), WORK_DIR gets the task copies, the memory banks, the
config and, under ``result/on-demand_gpt41_1/``, what the runner wrote (and ``requests.jsonl``, the model calls).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from p2w_runtime.demo.sites import start_sites
from p2w_runtime.testing import ScriptedLlm, Text, last_user_message, message_text, system_message

TASKS = ("Priya_Raman_A1", "Tomas_Reyes_A1", "Lena_Fischer_A1", "Marcus_Okafor_A1")
CONFIG_NAME = "on-demand_gpt41_1"
SYSTEM_INSTRUCTION = (  # the reference configs' (browser-use/config/*.yml), line for line
    "First, you MUST retrieve user's preferred website from their memory bank to support the execution of this query.\n"
    "Then, perform the query.\n"
    "DO NOT try any actions that require log in, phone number and e-mail address.\n"
    "NOTE: ADDRESS must be set first for appropriate items to appear, most of the time.\n"
    "STOP before executing irreversible actions such as payment or reservation confirmation.\n"
)
CONFIG = f"""experiment_id: "1"
backbone:
  provider: "openai"
  model: "gpt-4.1"
  base_url: "{{base_url}}"
scheme: "on-demand"
memory_bank_path: "memory_bank"
use_vision: false
max_steps: 8
judge:
  enabled: false
initial_actions:
  - navigate:
      url: "http://search.p2w.test/"
      new_tab: false
system_instruction: |
{"".join("  " + line + chr(10) for line in SYSTEM_INSTRUCTION.splitlines())}"""

# What each task's scripted model asks its memory, in order (a query the bank cannot answer finds nothing).
MEMORY_QUERIES = {
    "Priya_Raman_A1": ["where I buy leggings", "my leggings size"],
    "Tomas_Reyes_A1": ["where I buy show tickets"],
    "Lena_Fischer_A1": ["my favorite chess opening", "my dietary restrictions"],
    "Marcus_Okafor_A1": ["where I buy pants"],
}
TARGETS = {
    "Priya_Raman_A1": "http://threads.p2w.test/search?q=running+leggings&size=M",
    "Tomas_Reyes_A1": "http://stagepass.p2w.test/search?city=Denver&genre=comedy",
    "Lena_Fischer_A1": "http://basket.p2w.test/search?q=gluten-free+penne",
    "Marcus_Okafor_A1": "http://threads.p2w.test/search?q=slim+chinos",
}
_CACHED = re.compile(r"^Q: (.+)$", re.M)
_LINK = re.compile(r"^\s*\*?\[(\d+)\]<a />\s*\n\s*(.+)$", re.M)
_RESULTS = re.compile(r"^\d+ (?:results? for .+|events?)$", re.M)
_BUTTON = re.compile(r"^\s*\*?\[(\d+)\]<button[^\n]*/>\s*\n\s*Add to cart\s*$", re.M)


class RunnerModel:
    """The scripted model: Browser-Use's three kinds of call (memory check, memory answer, next action)."""

    def __init__(self, intents: dict[str, str]) -> None:
        self.intents = intents
        self.actions: Counter[str] = Counter()

    def task_of(self, request: dict[str, Any]) -> str:
        text = "\n".join(_texts(request))
        found = [task for task, intent in self.intents.items() if intent in text]
        if len(found) != 1:
            raise KeyError(f"no single task in the request: {found}")
        return found[0]

    def __call__(self, request: dict[str, Any]) -> Text:
        schema = json.dumps(request.get("response_format") or {})
        if "analyzes user memories" in system_message(request):
            return Text(_memory_answer(last_user_message(request)))
        task = self.task_of(request)
        if '"need_memory"' in schema:
            return Text(json.dumps(self.memory_check(task, last_user_message(request))))
        return self.next_action(task, request, schema)

    def memory_check(self, task: str, prompt: str) -> dict[str, Any]:
        asked = set(_CACHED.findall(prompt.partition("<previously_retrieved_memory>")[2]))
        ordinal = self.actions[f"{task}:check"]
        self.actions[f"{task}:check"] += 1
        queries = MEMORY_QUERIES[task]
        # The first query of Lena_Fischer_A1 is asked once, and finds nothing (no answer is cached for it).
        pending = [
            q
            for i, q in enumerate(queries)
            if q not in asked and not (task == "Lena_Fischer_A1" and i == 0 and ordinal > 0)
        ]
        if not pending:
            return {
                "current_observation": "The page shows the search I need.",
                "need_memory": False,
                "query_detail": None,
                "reason": "The retrieved memory already answers what the next action needs.",
            }
        return {
            "current_observation": "I am on the start page; the task depends on the user's habits.",
            "need_memory": True,
            "query_detail": pending[0],
            "reason": f"The task leaves open {pending[0]!r}; the user's history says it.",
        }

    def next_action(self, task: str, request: dict[str, Any], schema: str) -> Text:
        n = self.actions[task]
        self.actions[task] += 1
        page = next((t for t in reversed(_texts(request)) if "<browser_state>" in t), "")
        only_done = '"navigate"' not in schema
        if only_done and any("Therefore we terminate the agent" in t for t in _texts(request)):
            return _reply(
                "My answers were not in the format asked for; I stop.",
                {"done": {"text": "I could not finish the task.", "success": False}},
            )
        if only_done:
            return _reply(
                "I have no step left; I report what I found.",
                {"done": {"text": "I searched the shop but did not finish the task.", "success": False}},
            )
        if n == 0:
            return _reply(
                f"I open the shop's search for the task: {TARGETS[task]}.",
                {"navigate": {"url": TARGETS[task], "new_tab": False}},
            )
        if task == "Marcus_Okafor_A1":
            return Text("Sorry, I cannot help with that.")  # not JSON: every call after the first fails
        if task == "Tomas_Reyes_A1" and n == 1:
            return Text('{"thinking": "unterminated')  # one failed call
        if task == "Lena_Fischer_A1":
            down = n % 2 == 1
            goal = "I scroll down to see more results." if down else "I scroll back up to the filters."
            return _reply(goal, {"scroll": {"down": down, "pages": 1.0}})
        state = page.partition("<browser_state>")[2]
        url = _current_url(state)
        listed = _RESULTS.search(state)
        if urlsplit(url).path == "/search" and listed is not None and self.actions[f"{task}:clicked"] == 0:
            links = _LINK.findall(state[listed.end() :])
            if links:
                self.actions[f"{task}:clicked"] += 1
                index, text = links[0]
                return _reply(f"The first result fits: {text.strip()}.", {"click": {"index": int(index)}})
        add = _BUTTON.search(state)
        if task == "Priya_Raman_A1" and add is not None and self.actions[f"{task}:added"] == 0:
            self.actions[f"{task}:added"] += 1
            return _reply("This item fits; I add it to the cart.", {"click": {"index": int(add.group(1))}})
        success = task == "Priya_Raman_A1"
        text = (
            f"Added the item on {url} to the cart." if success else f"I opened {url} but could not confirm the price."
        )
        return _reply("I report the result.", {"done": {"text": text, "success": success}})


def _texts(request: dict[str, Any]) -> list[str]:
    return [message_text(m) for m in request.get("messages", [])]


def _current_url(state: str) -> str:
    tab = re.search(r"^Current tab: (\w+)", state, re.M)
    tab_id = re.escape(tab.group(1)) if tab else r"\w+"  # a page reached by a form post lists no current tab
    found = re.search(rf"^Tab {tab_id}: (\S+)", state, re.M)
    return found.group(1) if found else ""


def _memory_answer(prompt: str) -> str:
    lines = re.findall(r"^\d+\. \[[^\]]*\] \[[^\]]*\] (.+?) \(website: ([^,]*),", prompt, re.M)
    if not lines:
        return "The memories hold nothing on this."
    top = "; ".join(f"{obj} ({site})" for obj, site in lines[:3])
    return f"From the user's memories: {top}."


def _reply(goal: str, action: dict[str, Any]) -> Text:
    body = {
        "thinking": goal,
        "evaluation_previous_goal": "Success",
        "memory": "",
        "next_goal": goal,
        "action": [action],
    }
    return Text(json.dumps(body))


def _prepare(work: Path, sites_port: int, base_url: str) -> dict[str, str]:
    demo = resources.files("p2w_runtime.demo.sample")
    tasks_dir = work / "task" / "personalization_1"
    banks = work / "memory_bank"
    for folder in (tasks_dir, banks):
        folder.mkdir(parents=True, exist_ok=True)
    intents = {}
    for task in TASKS:
        text = demo.joinpath("tasks", "personalization_1", f"{task}.json").read_text(encoding="utf-8")
        (tasks_dir / f"{task}.json").write_text(text, encoding="utf-8")
        intents[task] = json.loads(text)["intent"]
        persona = task.rsplit("_", 1)[0]
        (banks / f"{persona}.json").write_text(
            demo.joinpath("history", f"{persona}.json").read_text(encoding="utf-8"), encoding="utf-8"
        )
    (work / f"{CONFIG_NAME}.yml").write_text(CONFIG.replace("{base_url}", base_url), encoding="utf-8")
    # Browser-Use looks for Chromium under PLAYWRIGHT_BROWSERS_PATH before /usr/bin/chromium; this wrapper is
    # Debian's Chromium with the demo sites' resolver rule (the runner passes Chromium no flags of ours).
    chrome = work / "browsers" / "chromium-debian" / "chrome-linux" / "chrome"
    chrome.parent.mkdir(parents=True, exist_ok=True)
    chrome.write_text(
        f'#!/bin/sh\nexec /usr/bin/chromium "--host-resolver-rules=MAP *.p2w.test 127.0.0.1:{sites_port}" "$@"\n'
    )
    chrome.chmod(chrome.stat().st_mode | stat.S_IXUSR)
    return intents


async def main(runner_dir: Path, runner_python: str, work: Path) -> int:
    work.mkdir(parents=True, exist_ok=True)
    sites = await start_sites(0)
    model = ScriptedLlm()
    async with model:
        intents = _prepare(work, sites.port, f"{model.base_url}")
        model.handle_with(RunnerModel(intents))
        env = dict(
            os.environ,
            OPENAI_API_KEY="scripted",
            PLAYWRIGHT_BROWSERS_PATH=str(work / "browsers"),
            BROWSER_USE_DISABLE_EXTENSIONS="1",
            BROWSER_USE_CONFIG_DIR=str(work / "browseruse-config"),
            ANONYMIZED_TELEMETRY="false",
            BROWSER_USE_CLOUD_SYNC="false",
            BROWSER_USE_VERSION_CHECK="false",
            BROWSER_USE_EMBEDDING_DEVICE="cpu",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
        )
        process = await asyncio.create_subprocess_exec(
            runner_python,
            str(runner_dir / "agent_runner.py"),
            "--config",
            str(work / f"{CONFIG_NAME}.yml"),
            "--tasks-dir",
            str(work / "task" / "personalization_1"),
            cwd=work,
            env=env,
        )
        code = await process.wait()
        with (work / "requests.jsonl").open("w", encoding="utf-8") as log:
            for body in model.chat_requests:
                log.write(json.dumps(body) + "\n")
    await sites.stop()
    return code


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))))
