"""The recording API holds its run as `record` does (claim `record/LABEL`): while a script records, a resume of its
run by another process is refused in one line naming the run and the recording process, writing nothing (before,
it closed the live attempt as dead under the recorder's feet); once the recorder is killed -9 the run resumes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2w_runtime.domain import list_runs
from p2w_runtime.errors import UserError
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store
from tests.helpers.paths import REPO
from tests.helpers.recording_tasks import TASKS

HELPERS = REPO / "tests" / "helpers"


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A script recording run 'live' through the API, inside its second episode, waiting."""
    db = tmp_path / "p2w.db"
    child = subprocess.Popen(
        [sys.executable, str(HELPERS / "recording_child.py"), str(db), "live"],
        stdout=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"READY"
        yield db, child
    finally:
        child.kill()
        child.wait()


async def test_a_run_recorded_by_a_script_is_not_resumed_by_another_process_until_it_is_gone(
    recorder: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    db, child = recorder
    async with open_store(db) as store:
        before = [e.event_id async for e in store.read_all()]
        with pytest.raises(UserError) as refused:
            await open_run(store, label="live", agent="child", model="m", tasks=TASKS, resume=True)
        said = str(refused.value)
        assert "\n" not in said and "'live'" in said, said
        assert f"process {child.pid} on {socket.gethostname()}" in said, said
        assert [e.event_id async for e in store.read_all()] == before  # its live attempt was left open
        (info,) = await list_runs(store)
        assert (info.status, info.episodes, info.attempts) == ("unfinished", 1, 2)

    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    async with open_store(db) as store:
        async with await open_run(store, label="live", agent="child", model="m", tasks=TASKS, resume=True) as run:
            assert [t.task_id for t in run.todo()] == ["T2"]
        (info,) = await list_runs(store)
        assert info.status != "unfinished"
