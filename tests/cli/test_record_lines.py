"""`record` piped (stderr not a terminal, so its bar draws nothing) says each episode as it finishes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript

LINE = re.compile(r"^\[(\d)/2\] (\S+): (\w+), (\d+) steps, (\d+) tokens, (\d+\.\d) s elapsed$")


@pytest.mark.slow
def test_a_piped_record_prints_one_line_per_finished_episode(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    agent = SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks(), {"Tomas_Reyes_A": "blocked"})
    scripted_llm.handle_with(agent)
    args = ["--db", str(tmp_path / "p2w.db"), "record", "--model", "scripted-model", "--base-url"]
    args += [scripted_llm.base_url, "--task", "Priya_Raman_A1", "--task", "Tomas_Reyes_A1", "--concurrency", "1"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)  # CliRunner's streams are not terminals
    assert result.exit_code == 0, result.output
    lines = [LINE.match(line) for line in result.stderr.splitlines()]  # nothing else: no bar, no blank line
    assert all(lines), result.stderr
    found = [m.groups() for m in lines if m]
    assert [(n, task, end) for n, task, end, *_ in found] == [
        ("1", "Priya_Raman_A1", "answered"),
        ("2", "Tomas_Reyes_A1", "blocked"),
    ]
    assert all(int(g[3]) > 0 for g in found)
    assert float(found[0][5]) <= float(found[1][5])  # elapsed since the command started: never goes back
    total = int(re.search(r"; (\d+) tokens", result.stdout).group(1))  # type: ignore[union-attr]  # the summary
    assert sum(int(g[4]) for g in found) == total > 0
    assert "1 answered, 1 blocked" in result.stdout
