"""Record any agent as it runs: the public recording API (docs/design/recording-api.md).

``open_run`` starts (or, with ``resume=True``, continues) a run; ``run.episode(task)`` records one attempt:
observations (from a Playwright ``Page`` or from values), history queries with their retrievals (or a search of
p2w-rt's own retriever), rationales, actions, the final state and the end, in the episode grammar, written behind
the agent step by step. ``instrument(openai_client)`` records the agent's model calls as ``llm.call`` events keyed
like p2w-rt's own client; ``served(client, RecordedCalls...)`` answers them again from the recording.

    async with await open_run(store, label="mine", agent="my-agent", model="gpt-4o", tasks=tasks) as run:
        llm = instrument(openai.AsyncOpenAI())
        for task in run.todo():
            async with run.episode(task) as episode:
                await episode.observe(page)
                reply = await llm.chat.completions.create(model="gpt-4o", messages=[...])
                await episode.action("click [Add to cart]")
                await episode.final_state(page)
                await episode.end("answered", answer="...")
"""

from p2w_runtime.domain import EpisodeGrammarError
from p2w_runtime.recording._episode import EpisodeRecorder, current_episode
from p2w_runtime.recording._instrument import instrument
from p2w_runtime.recording._replay import FORK_ENV, REPLAY_ENV, Fork, ReplayDiverged
from p2w_runtime.recording._run import Recording, open_run
from p2w_runtime.recording._served import RecordedCalls, served
from p2w_runtime.recording._transport import ROLE_HEADER

__all__ = [
    "ROLE_HEADER",
    "EpisodeGrammarError",
    "EpisodeRecorder",
    "RecordedCalls",
    "Recording",
    "current_episode",
    "instrument",
    "open_run",
    "served",
    # replay mode (p2w-rt rerun --exec)
    "REPLAY_ENV",
    "ReplayDiverged",
    # fork mode (p2w-rt fork --exec)
    "FORK_ENV",
    "Fork",
]
