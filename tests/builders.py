"""Small hand-built runs for tests that need events in a store without importing or recording."""

from __future__ import annotations

from schemas import (
    Action,
    EpisodeFinished,
    EpisodeStarted,
    FinalState,
    NewEvent,
    Observation,
    ParsedAction,
    RunFinished,
    RunStarted,
    blob_hash,
    uuid7,
)


def run_started(run_id: str, label: str) -> NewEvent:
    return NewEvent(
        stream=run_id,
        payload=RunStarted(
            run_id=run_id,
            label=label,
            agent="test-agent",
            backbone_model="test-model",
            scheme="on-demand",
            dataset_id="test",
            dataset_hash="0" * 64,
            code_version="test",
        ),
    )


def episode(
    run_id: str, task_id: str, steps: int = 3, page: bytes | None = None
) -> tuple[list[NewEvent], dict[str, bytes]]:
    """One finished episode with observations (each carrying a blob), actions and a final state."""
    stream = f"{run_id}/{task_id}"
    page = page or f"<html>{task_id}</html>".encode()
    sha = blob_hash(page)
    events = [
        NewEvent(
            stream=stream,
            payload=EpisodeStarted(
                episode_id=task_id,
                task_id=task_id,
                persona=task_id.rsplit("_", 1)[0],
                query_set=task_id[:-1],
                level=0,
                query=f"query of {task_id}",
                start_url="http://search.p2w.test/",
            ),
        )
    ]
    for step in range(1, steps + 1):
        events.append(
            NewEvent(stream=stream, payload=Observation(step=step, url=f"http://shop.p2w.test/{step}", ax_tree=sha))
        )
        events.append(
            NewEvent(
                stream=stream,
                payload=Action(
                    step=step,
                    raw=f"click [{step}]",
                    status="executed",
                    parsed=ParsedAction(name="click", args=[str(step)]),
                ),
            )
        )
    events.append(NewEvent(stream=stream, payload=FinalState(url="http://shop.p2w.test/done", dom_html=sha)))
    events.append(NewEvent(stream=stream, payload=EpisodeFinished(end_reason="answered", answer="done", steps=steps)))
    return events, {sha: page}


async def build_run(store, label: str = "test-run", tasks: tuple[str, ...] = ("Ann_Lee_A3", "Ann_Lee_B3")) -> str:
    """Append a finished run with one episode per task; returns the run id."""
    run_id = uuid7()
    await store.append([run_started(run_id, label)])
    for task in tasks:
        events, blobs = episode(run_id, task)
        await store.append(events, blobs)
    await store.append([NewEvent(stream=run_id, payload=RunFinished(status="completed", episodes=len(tasks)))])
    return run_id
