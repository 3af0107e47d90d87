"""Hand-built episodes for the classifier, diff and stats tests, on top of ``p2w_runtime.testing.episodes``.

``good_episode`` is a level-2 episode with no error at all; each test changes one thing in a
copy of it (or builds its own) so that exactly one label should appear.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2w_rt.schemas import GroundTruth, Location, MemoryEntry
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

KOHLS_TRUTH = GroundTruth(
    website="kohls.com",
    websites=["kohls.com"],
    preferences=["32x32", "visible ratings 4.2+ stars with 50+ reviews"],
    location=Location(city="Los Angeles", state="CA", zip="90210", raw="Los Angeles, CA 90210"),
)
KOHLS_L0 = (
    "At kohls.com, find men's slim-fit chinos in **32x32** that meet **visible ratings 4.2+ stars with 50+ "
    "reviews** (Los Angeles, CA 90210)"
)
KOHLS_L2 = "Find men's slim-fit chinos in my usual waist/inseam that meet my typical ratings standard"

SIZE = MemoryEntry(timestamp="2024-03-01", type="purchase", object="men's slim-fit chinos 32x32", website="kohls.com")
RATING = MemoryEntry(
    timestamp="2024-03-02",
    type="review and rating",
    object="only buys items with 4.2+ stars and 50+ reviews",
    website="kohls.com",
)
SIZE_ANSWER = "The user buys slim-fit chinos in 32x32 at kohls.com."
RATING_ANSWER = "The user wants visible ratings of 4.2+ stars with 50+ reviews."


def builder(
    run_id: str = "run",
    task_id: str = "Alex_Garcia_A1",
    *,
    query: str = KOHLS_L2,
    level: int = 2,
    scheme: str | None = "on-demand",
    truth: GroundTruth | None = KOHLS_TRUTH,
) -> EpisodeBuilder:
    return EpisodeBuilder(
        run_id, task_id, query=query, ground_truth=truth, level=level, scheme=scheme, start_url="https://www.bing.com/"
    )


def ask(
    b: EpisodeBuilder,
    query: str,
    entries: Sequence[MemoryEntry] = (),
    answer: str | None = None,
    *,
    step: int | None = 1,
    first_id: int = 0,
) -> tuple[str, str]:
    """A history query, its retrieval (no entries: nothing above the threshold) and the memory answer."""
    q = b.history_query(query, step=step)
    r = b.retrieval(q, query, entries, step=step, first_id=first_id)
    if answer is not None:
        b.memory_answer(r, answer, step=step)
    return q, r


def ask_well(b: EpisodeBuilder, *, first_id: int = 10, rating: bool = True) -> dict[str, str]:
    """Ask about the size (and the rating standard): the entries and answers hold the site and both values."""
    ids = dict(
        zip(
            ("size_q", "size_r"),
            ask(b, "which chino size does the user buy", [SIZE], SIZE_ANSWER, first_id=first_id),
            strict=True,
        )
    )
    if rating:
        ids.update(
            zip(
                ("rating_q", "rating_r"),
                ask(b, "what rating does the user require", [RATING], RATING_ANSWER, first_id=first_id + 1),
                strict=True,
            )
        )
    return ids


def act_well(
    b: EpisodeBuilder, *, size: str | None = "32x32", rating: bool = True, extra_param: str = "", end: str = "answered"
) -> dict[str, str]:
    """Go to kohls.com, search (with the size), filter by rating, open a product, answer."""
    ids: dict[str, str] = {}
    b.observation(1, "https://www.bing.com/")
    b.planner(1, "The user shops at kohls.com; go there.")
    b.action(1, "goto", "https://www.kohls.com/")
    b.observation(2, "https://www.kohls.com/", "Kohl's")
    wanted = f"men's slim fit chinos {size}" if size else "men's slim fit chinos"
    b.planner(2, f"Search for {wanted}.")
    ids["type"] = b.action(2, "type", "5", wanted, "1")
    query = "+".join(wanted.replace("'", "").split()) + ("&rating=4.2" if rating else "") + extra_param
    ids["results"] = b.observation(3, f"https://www.kohls.com/search.jsp?search={query}", "Results")
    if rating:
        b.planner(3, "Sonoma chinos show 4.5 stars with 210 reviews, meeting 4.2+ stars with 50+ reviews.")
    b.action(3, "click", "31")
    b.observation(4, "https://www.kohls.com/product/prd-123/sonoma-chinos.jsp", "Sonoma chinos $39.99")
    answer = f"Sonoma slim-fit chinos{' ' + size if size else ''}, 4.5 stars (210 reviews), $39.99 at kohls.com"
    if end == "answered":
        b.action(4, "stop", answer)
        ids["finished"] = b.finish("answered", answer, steps=4)
    else:
        ids["finished"] = b.finish(end, None, steps=30, detail=f"ended: {end}")
    return ids


def good_episode(run_id: str = "run", task_id: str = "Alex_Garcia_A1", *, first_id: int = 10) -> EpisodeBuilder:
    """Retrieves the site and both preferences, applies them, answers: no error of any kind."""
    b = builder(run_id, task_id)
    ask_well(b, first_id=first_id)
    act_well(b)
    return b


def wrong_size(run_id: str, task_id: str) -> EpisodeBuilder:
    """Retrieves 32x32 but searches 34x30 from step 2 on: rubric-rules P_pref 0.75, no success."""
    b = builder(run_id, task_id)
    ask_well(b)
    act_well(b, size="34x30")
    return b


async def add_run(
    store,
    label: str,
    episodes: Sequence[EpisodeBuilder],
    *,
    run_id: str,
    agent: str = "test-agent",
    model: str = "test-model",
    scheme: str | None = "on-demand",
) -> str:
    """Append a finished run holding ``episodes`` (each built with ``run_id``); returns the run id."""
    await store.append([run_started(run_id, label, agent=agent, model=model, scheme=scheme)])
    for b in episodes:
        assert b.stream.startswith(f"{run_id}/"), "build every episode with the run's id"
        await store.append(b.events, b.blobs)
    await store.append([run_finished(run_id, len(episodes))])
    return run_id
