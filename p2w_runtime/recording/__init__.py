"""Record any agent as it runs: the public recording API (docs/design/recording-api.md).

``open_run`` starts (or, with ``resume=True``, continues) a run, carrying its task files and memory banks;
``run.episode(task)`` records one attempt: observations (from a Playwright ``Page``, read behind the agent, or from
values), history queries with their retrievals (or a search of p2w-rt's own retriever), rationales, actions with
their outcome, the final state and the end, in the episode grammar, written behind the agent step by step.
``instrument(openai_client)`` records the agent's model calls as ``llm.call`` events keyed like p2w-rt's own
client; ``served(client, RecordedCalls...)`` answers them again from the recording. Everything a recording agent
needs is importable from here.

    async with open_store("runs.db") as store:
        tasks = load_tasks(tasks_dir)
        async with await open_run(store, label="mine", agent="my-agent", model="gpt-4o", tasks=tasks,
                                  history=history_dir) as run:
            llm = instrument(openai.AsyncOpenAI())
            for task in run.todo():
                async with run.episode(task) as episode:
                    await episode.observe(page)
                    reply = await llm.chat.completions.create(model="gpt-4o", messages=[...])
                    async with episode.action("click [Add to cart]", ParsedAction(name="click", args=["Add to cart"])):
                        await page.get_by_role("button", name="Add to cart").click()
                    await episode.final_state(page)
                    await episode.end("answered", answer="...")
"""

from p2w_rt.schemas import MemoryEntry, ParsedAction, RetrievalHit
from p2w_runtime.data import Task, TaskSet, load_tasks
from p2w_runtime.domain import CarriedDataset, EpisodeGrammarError, carry_dataset
from p2w_runtime.recording._action import ActionCall
from p2w_runtime.recording._episode import EpisodeRecorder, current_episode
from p2w_runtime.recording._instrument import instrument
from p2w_runtime.recording._page import PageView, PageWatcher, ScreenshotPolicy
from p2w_runtime.recording._replay import FORK_ENV, REPLAY_ENV, Fork, ReplayDiverged
from p2w_runtime.recording._run import Recording, open_run
from p2w_runtime.recording._served import RecordedCalls, served
from p2w_runtime.recording._transport import ROLE_HEADER, AsyncRecordingTransport, CallRecorder
from p2w_runtime.retrieval import HistoryRetriever, SearchHit, load_embedder
from p2w_runtime.store import EventStore, open_store

__all__ = [
    "ROLE_HEADER",
    "ActionCall",
    "AsyncRecordingTransport",
    "CallRecorder",
    "PageView",
    "PageWatcher",
    "CarriedDataset",
    "EpisodeGrammarError",
    "EpisodeRecorder",
    "EventStore",
    "HistoryRetriever",
    "MemoryEntry",
    "ParsedAction",
    "RecordedCalls",
    "Recording",
    "RetrievalHit",
    "ScreenshotPolicy",
    "SearchHit",
    "Task",
    "TaskSet",
    "carry_dataset",
    "current_episode",
    "instrument",
    "load_embedder",
    "load_tasks",
    "open_run",
    "open_store",
    "served",
    # replay mode (p2w-rt rerun --exec)
    "REPLAY_ENV",
    "ReplayDiverged",
    # fork mode (p2w-rt fork --exec)
    "FORK_ENV",
    "Fork",
]
