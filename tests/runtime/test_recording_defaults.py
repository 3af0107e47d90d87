"""The recording API's defaults: a run carries its dataset, a page is read behind the agent with a screenshot only
when it changed, and an action is recorded after it ran, with its outcome and duration."""

from __future__ import annotations

import openai
import pytest
from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from p2w_rt.schemas import Action, Observation, StoredEvent, upcast
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.domain import find_run, run_banks, run_tasks
from p2w_runtime.errors import UserError
from p2w_runtime.recording import ParsedAction, instrument, load_tasks, open_run
from p2w_runtime.store import EventStore
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.recording_tasks import TASKS

TASK = "Lena_Fischer_A1"
PAGE = "<h1>Penne</h1><button>Add to cart</button>"


async def stored(store: EventStore, stream: str) -> list[StoredEvent]:
    return [event async for event in store.read_stream(stream)]


async def test_a_run_carries_its_task_files_and_memory_banks_unless_told_not_to(store: EventStore) -> None:
    tasks = load_tasks(sample_tasks_dir())
    await open_run(
        store, label="carried", agent="mine", model="m", tasks=tasks, only=[TASK], history=sample_history_dir()
    )
    run = await find_run(store, "carried")
    assert run.started.config.tasks == [TASK]
    assert TASK in (await run_tasks(store, run)).tasks  # no folder given: the run's own files
    assert "Lena_Fischer" in (await run_banks(store, run)).personas()
    assert run.started.dataset is not None and run.started.dataset.tasks_folder == sample_tasks_dir().name

    await open_run(store, label="bare", agent="mine", model="m", tasks=tasks, only=[TASK], carried=False)
    with pytest.raises(UserError) as bare:
        await run_banks(store, await find_run(store, "bare"))
    assert str(bare.value) == (
        "run 'bare' carries no memory banks (recorded without it): attach them with "
        "`p2w-rt attach-dataset bare --tasks DIR --history DIR`, or pass --history DIR"
    )
    with pytest.raises(UserError, match="no task 'nope' among the"):
        await open_run(store, label="wrong", agent="mine", model="m", tasks=tasks, only=["nope"])


async def test_a_screenshot_is_taken_when_the_page_changed_and_reused_when_it_did_not(
    store: EventStore, browser: Browser
) -> None:
    page = await browser.new_page()
    await page.set_content(PAGE)
    run = await open_run(store, label="shots", agent="mine", model="m", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(page)
        await episode.action("wait")
        # a change the ARIA snapshot does not see: the default policy keeps the earlier screenshot
        await page.evaluate("document.body.style.background = 'rgb(200, 30, 30)'")
        await episode.observe(page)
        await episode.action("wait")
        await episode.observe(page, screenshots="always")
        await episode.action("wait")
        await page.set_content(PAGE.replace("Penne", "Rice"))
        await episode.observe(page)
        await episode.action("wait")
        await episode.observe(page, screenshots="never")
        await episode.end("answered", "done")
    seen = [e.decode_payload() for e in await stored(store, episode.stream)]
    shots = [p.screenshot for p in seen if isinstance(p, Observation)]
    assert shots[0] is not None and shots[1] == shots[0]
    assert shots[2] not in (None, shots[0])  # red now
    assert shots[3] not in (None, shots[2]) and shots[4] is None
    trees = [p.ax_tree for p in seen if isinstance(p, Observation)]
    assert trees[0] == trees[1] == trees[2] != trees[3]


async def test_a_model_call_made_while_the_page_is_read_is_stored_after_the_observation_with_its_time(
    store: EventStore, browser: Browser, scripted_llm: ScriptedLlm
) -> None:
    scripted_llm.script(Text("click [Add to cart]"))
    llm = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key="sk-test-0000"))
    page = await browser.new_page()
    await page.set_content(PAGE)
    run = await open_run(store, label="order", agent="mine", model="m", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(page)
        await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": "next?"}])
        await episode.action("click [Add to cart]")
        await episode.end("answered", "done")
    events = await stored(store, episode.stream)
    assert [e.type for e in events] == ["episode.started", "observation", "llm.call", "action", "episode.finished"]
    observed, called = events[1], events[2]
    assert observed.recorded_at <= called.recorded_at
    assert called.decode_payload().step == 1


async def test_an_action_is_recorded_after_it_ran_with_its_outcome_and_duration(
    store: EventStore, browser: Browser
) -> None:
    page = await browser.new_page()
    await page.set_content(PAGE)
    run = await open_run(store, label="outcome", agent="mine", model="m", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(page)
        async with episode.action("click [Add to cart]", ParsedAction(name="click", args=["Add to cart"])):
            await page.get_by_role("button", name="Add to cart").click()
        await episode.observe(page)
        with pytest.raises(PlaywrightError):
            async with episode.action("click [Checkout]", ParsedAction(name="click", args=["Checkout"])):
                await page.get_by_role("button", name="Checkout").click(timeout=300)
        await episode.observe(page)
        async with episode.action("type [quantity] [2]") as act:
            act.failed("no quantity field on this page")
        await episode.observe(page)
        await episode.action("scroll [down]", status="blocked", error="the site refused")
        await episode.end("answered", "done")
    actions = [p for e in await stored(store, episode.stream) if isinstance(p := e.decode_payload(), Action)]
    assert [(a.status, a.error is None) for a in actions] == [
        ("executed", True),
        ("invalid", False),
        ("invalid", False),
        ("blocked", False),
    ]
    assert actions[1].error is not None and actions[1].error.startswith("TimeoutError: ")
    assert actions[2].error == "no quantity field on this page"
    assert all(a.duration_s is not None and a.duration_s >= 0 for a in actions[:3])
    assert actions[3].duration_s is None  # awaited: the agent said what happened, untimed


def test_an_action_of_schema_version_1_reads_untimed() -> None:
    old = {"type": "action", "step": 1, "raw": "click [1]", "parsed": None, "status": "executed", "error": None}
    assert Action.model_validate(upcast("action", 1, old, Action.SCHEMA_VERSION)).duration_s is None
