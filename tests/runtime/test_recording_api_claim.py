"""The recording API holds its run as `record` does (claim `record/LABEL`): while a script records, a resume of its
run by another process is refused in one line naming the run and the recording process, writing nothing (before,
it closed the live attempt as dead under the recorder's feet); once the recorder is killed -9 the run resumes. A
recorder joining the run (`join=True`) is refused the same way, as a worker of `record` is. The claim is given back
by the first close: a second writes nothing."""

from __future__ import annotations

import asyncio
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
from p2w_runtime.store import EventStore, open_store
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


async def _refused_in_one_line_naming(
    child: subprocess.Popen[bytes], store: EventStore, *, resume: bool = False, join: bool = False
) -> None:
    """``open_run`` of the child's run (resumed or joined) is refused in one line naming the child, writing nothing."""
    before = [e.event_id async for e in store.read_all()]
    with pytest.raises(UserError) as refused:
        await open_run(store, label="live", agent="child", model="m", tasks=TASKS, resume=resume, join=join)
    said = str(refused.value)
    assert "\n" not in said and "'live'" in said, said
    assert f"process {child.pid} on {socket.gethostname()}" in said, said
    assert [e.event_id async for e in store.read_all()] == before


async def test_a_run_recorded_by_a_script_is_not_resumed_by_another_process_until_it_is_gone(
    recorder: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    db, child = recorder
    async with open_store(db) as store:
        await _refused_in_one_line_naming(child, store, resume=True)  # its live attempt was left open
        (info,) = await list_runs(store)
        assert (info.status, info.episodes, info.attempts) == ("unfinished", 1, 2)

    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    async with open_store(db) as store:
        async with await open_run(store, label="live", agent="child", model="m", tasks=TASKS, resume=True) as run:
            assert [t.task_id for t in run.todo()] == ["T2"]
        (info,) = await list_runs(store)
        assert info.status != "unfinished"


async def test_a_run_recorded_by_a_script_is_not_joined_by_another_process_until_it_is_gone(
    recorder: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    """Joined, the lone recorder's open attempt would be taken for a dead worker's and its task recorded again."""
    db, child = recorder
    async with open_store(db) as store:
        await _refused_in_one_line_naming(child, store, join=True)

    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    async with open_store(db) as store:
        joined = await open_run(store, label="live", agent="child", model="m", tasks=TASKS, join=True)
        assert [t.task_id for t in joined.todo()] == ["T2"]


async def _run_finished(store: EventStore, run_id: str) -> int:
    return len([e async for e in store.read_stream(run_id) if e.type == "run.finished"])


async def test_a_second_close_writes_nothing_and_returns_the_first_ones_result(store: EventStore) -> None:
    """A script closing its run inside `async with`: the block's end, and any later close, write no second
    `run.finished`, least of all while another recorder holds the run the first close gave back."""
    async with await open_run(store, label="twice", agent="a", model="m", tasks=TASKS) as run:
        async with run.episode("T1") as episode:
            await episode.observe(url="http://shop.example/")
            await episode.end("answered", "rice")
        first = await run.close()
        resumed = await open_run(store, label="twice", agent="a", model="m", tasks=TASKS, resume=True)
        assert await run.close(interrupted=True) is first
        with pytest.raises(UserError, match="run 'twice' is closed: open it with resume=True"):
            run.episode("T2")
    assert first.status == "completed" and await _run_finished(store, run.run_id) == 1
    await resumed.close()  # its own, under the claim it holds
    assert await _run_finished(store, run.run_id) == 2


async def test_a_close_that_did_not_end_is_not_done_again_without_the_claim(store: EventStore) -> None:
    run = await open_run(store, label="cut", agent="a", model="m", tasks=TASKS)
    closing = asyncio.ensure_future(run.close())
    await asyncio.sleep(0)  # the close is under way, waiting on the database
    closing.cancel()  # Ctrl-C
    with pytest.raises(asyncio.CancelledError):
        await closing
    with pytest.raises(UserError, match="run 'cut': its close did not end and the run is no longer held"):
        await run.close()
    assert await _run_finished(store, run.run_id) == 0
    async with await open_run(store, label="cut", agent="a", model="m", tasks=TASKS, resume=True):
        pass  # the claim was given back
    assert await _run_finished(store, run.run_id) == 1
