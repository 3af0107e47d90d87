"""Nothing is appended after the end of an episode: a second writer (another process's store on the same file, as a
worker that lost its task to another) appending to a stream whose last event is ``episode.finished`` is refused
with ``StreamEnded``, nothing of its append is stored, and the store still verifies."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2w_rt.schemas import NewEvent, Observation
from p2w_runtime.store import StreamEnded, open_store, verify_store
from p2w_runtime.testing.episodes import EpisodeBuilder


def _finished_episode() -> EpisodeBuilder:
    b = EpisodeBuilder("r", "Lena_Fischer_A1", query="q", scheme=None, start_url="http://search.p2w.test/")
    b.observation(1, "http://search.p2w.test/")
    b.finish("aborted", detail="abandoned: its worker stopped renewing the lease (killed or cut off)")
    return b


def test_an_append_after_the_end_of_an_episode_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    episode = _finished_episode()
    late = NewEvent(stream=episode.stream, payload=Observation(step=2, url="http://basket.p2w.test/"))

    async def go() -> tuple[int, int, bool]:
        async with open_store(db) as taker, open_store(db) as late_writer:
            await late_writer.append([NewEvent(stream="other", payload=Observation(step=1, url="http://x.test/"))])
            await taker.append(episode.events, episode.blobs)  # the other worker closes the attempt
            with pytest.raises(StreamEnded, match=r"ended with episode.finished \(seq 3\)"):
                await late_writer.append([late])
            with pytest.raises(StreamEnded):  # and again, whichever way the writer reads the end of the log
                await late_writer.append([late])
            head = await taker.stream_head(episode.stream)
            assert head is not None
            events = [e async for e in taker.read_all()]
            return head.last_seq, len(events), (await verify_store(taker)).ok

    last_seq, stored, verified = asyncio.run(go())
    assert (last_seq, stored, verified) == (3, 4, True)
