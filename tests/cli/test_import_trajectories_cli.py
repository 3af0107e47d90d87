"""``p2w-rt import-trajectories`` on the command line: the bundled examples imported and resumed, a bad file as one
line and exit 1 unless ``--skip-bad``, a Browser-Use result folder as written, progress on a terminal."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.helpers.import_support import BROWSER_USE, BROWSER_USE_RESULT, EXAMPLES
from tests.helpers.terminal_support import run_on_terminal


def test_cli_imports_the_bundled_examples_and_resumes_idempotently(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from p2w_rt.cli import main

    db = str(tmp_path / "cli.db")
    runner = CliRunner()
    first = runner.invoke(main, ["--db", db, "import-trajectories", "--examples", "--format", BROWSER_USE])
    assert first.exit_code == 0, first.output
    assert "(label examples-browser-use, p2w-browser-use): 3 episodes" in first.output
    assert "imported 3, already imported 0, bad 0" in first.output
    again = runner.invoke(main, ["--db", db, "import-trajectories", "--examples", "--format", BROWSER_USE])
    assert again.exit_code == 0 and "imported 0, already imported 3, bad 0" in again.output


def test_cli_bad_file_is_one_line_and_exit_1_unless_skip_bad(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from p2w_rt.cli import main

    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(EXAMPLES.trajectories(BROWSER_USE)[0], folder)
    (folder / "on_gpt41_Mina_Okafor_A1.json").write_text("[")
    args = ["--db", str(tmp_path / "cli.db"), "import-trajectories", "--format", BROWSER_USE, "--label", "bu"]
    args += ["--tasks", str(EXAMPLES.tasks_dir), "--history", str(EXAMPLES.history_dir), str(folder)]
    runner = CliRunner()
    failed = runner.invoke(main, args)
    assert failed.exit_code == 1
    assert failed.output.count("\n") == 1 and "Traceback" not in failed.output
    assert failed.output.startswith("error: 1 bad trajectory file (--skip-bad imports the rest): ")
    assert "on_gpt41_Mina_Okafor_A1.json: invalid JSON at line 1" in failed.output
    skipped = runner.invoke(main, [*args, "--skip-bad"])
    assert skipped.exit_code == 0
    assert "imported 1, already imported 0, bad 1" in skipped.output
    assert "bad: " in skipped.output and "on_gpt41_Mina_Okafor_A1.json" in skipped.output


def test_cli_imports_a_browser_use_result_folder_as_written(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from p2w_rt.cli import main
    from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir

    folder = BROWSER_USE_RESULT / "on-demand_gpt41_1"
    args = ["--db", str(tmp_path / "cli.db"), "import-trajectories", "--format", BROWSER_USE, "--label", "bu"]
    args += ["--tasks", str(sample_tasks_dir()), "--history", str(sample_history_dir()), str(folder)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == [
        "imported 4, already imported 0, bad 0",
        "crashed tasks (episodes ended 'error'): Marcus_Okafor_A1",
    ]
    assert result.stderr.splitlines() == [  # stderr is no terminal here: a line per written episode, no bar
        "[1] Lena_Fischer_B1: no_answer, 3 steps",
        "[2] Priya_Raman_C1: answered, 1 step",
        "[3] Tomas_Reyes_B1: answered, 4 steps",
        "[4] Marcus_Okafor_A1: error, 0 steps",
        f"superseded: {folder / 'Priya_Raman_C1.error.json'} (the task also has a trajectory)",
    ]


def test_cli_shows_progress_on_a_terminal_and_writes_the_same_run(tmp_path: Path) -> None:
    import sys

    from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir

    p2w_rt = str(Path(sys.executable).with_name("p2w-rt"))
    args = [p2w_rt, "--db", str(tmp_path / "tty.db"), "--log-file", str(tmp_path / "log.jsonl")]
    args += ["import-trajectories", "--format", BROWSER_USE, "--label", "bu", "--tasks", str(sample_tasks_dir())]
    args += ["--history", str(sample_history_dir()), str(BROWSER_USE_RESULT / "on-demand_gpt41_1")]
    code, shown, stdout = run_on_terminal(args, {**os.environ, "COLUMNS": "100", "TERM": "xterm"})
    assert code == 0, shown
    assert "imported 4, already imported 0, bad 0" in stdout
    assert b"checking" in shown and b"writing" in shown, shown
