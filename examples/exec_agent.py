"""A small web agent that knows nothing of p2w-rt, recorded with no code change by `record --exec`.

It reads its task from P2W_TASK_FILE, attaches to the browser at P2W_CDP_URL, asks its model (the openai SDK,
which reads OPENAI_BASE_URL and OPENAI_API_KEY) for one `Action: name [argument]` per step, acts, and prints
its answer as the last line, {"answer": ...}. A reply with no Action line is taken as the answer.

    p2w-rt demo-model serve --port 8000 &
    p2w-rt --db demo.db record --exec "python examples/exec_agent.py" \\
        --base-url http://127.0.0.1:8000/v1 --model scripted-model --level 2 --limit 2 --label py-agent
"""

import json
import os
import re
import sys
from pathlib import Path

import openai
from playwright.sync_api import sync_playwright

ACTION = re.compile(r"Action:\s*(\w+)\s*\[(.*)\]\s*$", re.S)
SYSTEM = (
    "You browse the web for a user. Answer with `Thought: ...` and one `Action: name [argument]`: "
    "goto [url], click [link or button text], fill [field label=text], stop [your answer]."
)


def act(page, name, arg):
    if name == "goto":
        page.goto(arg)
    elif name == "click":
        page.get_by_role("link", name=arg).or_(page.get_by_role("button", name=arg)).first.click()
    elif name == "fill":
        label, _, text = arg.partition("=")
        page.get_by_label(label.strip()).fill(text.strip())
    page.wait_for_load_state("domcontentloaded")


def main():
    task = json.loads(Path(os.environ["P2W_TASK_FILE"]).read_text(encoding="utf-8"))
    cdp_url = os.environ.get("P2W_CDP_URL")
    if not cdp_url:  # rerun/fork --exec give a browser only with --restore har (docs/design/exec.md)
        sys.exit("exec_agent.py: no browser to drive: P2W_CDP_URL is not set (rerun --exec needs --restore har)")
    model = openai.OpenAI()
    with sync_playwright() as pw:
        page = pw.chromium.connect_over_cdp(cdp_url).contexts[0].pages[0]
        for _ in range(10):
            seen = page.locator("body").inner_text()[:3000]
            asked = f"Task: {task['intent']}\nPage {page.url}:\n{seen}"
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": asked}]
            reply = model.chat.completions.create(model=os.environ.get("P2W_MODEL", "gpt-4o-mini"), messages=messages)
            text = reply.choices[0].message.content or ""
            found = ACTION.search(text)
            if found is None or found.group(1) == "stop":
                return found.group(2) if found else text.strip()
            act(page, found.group(1), found.group(2))
    return None


if __name__ == "__main__":
    print(json.dumps({"answer": main()}))
