"""The files ``record --exec`` shares with an outside agent are UTF-8 whatever the recorder's locale: an ASCII-only
locale (``LC_ALL=C`` with Python's coercion to UTF-8 turned off) must neither fail on a non-ASCII task nor read the
agent's UTF-8 answer as replacement characters."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers.exec_support import P2W_RT, TASK
from tests.helpers.paths import REPO

ASCII_ONLY = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
ANSWER = "Café Müller, 2 naïve chinos — ¥4,980"


def test_the_answer_file_is_read_as_utf8_under_an_ascii_locale(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os\n"
        "task = json.loads(open(os.environ['P2W_TASK_FILE'], encoding='utf-8').read())\n"
        f"open(os.environ['P2W_ANSWER_FILE'], 'w', encoding='utf-8').write({ANSWER!r})\n"
    )
    env = {**os.environ, **ASCII_ONLY}
    command = [P2W_RT, "--db", str(db), "record", "--exec", f"python3 {agent}", "--task", TASK]
    done = subprocess.run(
        [*command, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--label", "c"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=REPO,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    shown = subprocess.run(
        [P2W_RT, "--db", str(db), "show", "c", TASK, "--json"], capture_output=True, text=True, encoding="utf-8"
    )
    finished = [json.loads(line)["payload"] for line in shown.stdout.splitlines() if "episode.finished" in line]
    assert [f["answer"] for f in finished] == [ANSWER]
