"""Read models an installed package keeps in a store are brought forward by whoever appends through ``open_store``
(``p2w_runtime/store/_read_models.py``): the package is another distribution, found by its entry point, and loaded
only in a store where it keeps rows."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2w_runtime.installed_plugins import PluginLoadError
from p2w_runtime.store import Summary, open_store
from p2w_runtime.store import _read_models as read_models
from tests.helpers.builders import episode, run_started
from tests.helpers.plugin_install import install

MODEL = "outside.appended.v1"
KEEPER = f'''
from p2w_runtime.store import Summary


async def keep(store, since, end, notify):
    """Keeps one row: the span the last writer appended, and who was told."""
    if notify is not None:
        notify(f"keeping {MODEL} from {{since}} to {{end}}")
    mark = await store.summary_mark("{MODEL}")
    row = Summary("{MODEL}", "appended", "all", end, f"{{since}} {{end}}")
    await store.write_summaries("{MODEL}", [row], since=mark, until=end)
'''
"""The outside package's read model: it records the span it was asked to bring forward."""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` for one distribution; the entry points are scanned again with it, and without it
    after the test."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    read_models._installed.cache_clear()
    yield folder
    sys.modules.pop("outside_bench", None)
    read_models._installed.cache_clear()


def keeper(site: Path, module: str | None = KEEPER) -> None:
    install(site, f"{MODEL} = outside_bench:keep", module, group=read_models.ENTRY_POINT_GROUP)


async def kept(db: Path) -> tuple[int | None, list[str]]:
    async with open_store(db, create=False, read_only=True) as store:
        return await store.summary_mark(MODEL), [row.body for row in await store.read_summaries(MODEL)]


async def start_keeping(db: Path) -> int:
    """A run's first event (no model keeps rows yet: nothing is asked), then the outside model's first row and
    mark at it, as its owner would write them (nothing appended: nothing is asked)."""
    async with open_store(db) as store:
        await store.append([run_started("01run", "run")])
    async with open_store(db) as store:
        end = await store.log_end()
        await store.write_summaries(MODEL, [Summary(MODEL, "appended", "all", end, "set")], since=0, until=end)
    return end


def test_a_writer_brings_the_model_forward_as_the_store_closes_and_a_reader_does_not(site: Path, tmp_path: Path):
    keeper(site)
    db = tmp_path / "runs.db"
    told: list[str] = []

    async def scenario() -> None:
        first = await start_keeping(db)
        assert await kept(db) == (first, ["set"])
        async with open_store(db, notify=told.append) as store:
            events, blobs = episode("01run", "Ann_Lee_A3")
            await store.append(events, blobs)
            end = await store.log_end()
        assert await kept(db) == (end, [f"{first} {end}"])
        assert told == [f"keeping {MODEL} from {first} to {end}"]
        async with open_store(db) as store:
            assert await store.log_end() == end  # read, appended nothing
        with pytest.raises(RuntimeError):
            async with open_store(db) as store:
                await store.append([run_started("01other", "other")])
                raise RuntimeError("the writer's own work failed")
        assert await kept(db) == (end, [f"{first} {end}"]), "not asked after a block that raised"

    asyncio.run(scenario())


def test_a_store_where_the_model_keeps_no_rows_loads_nothing_of_it(site: Path, tmp_path: Path) -> None:
    keeper(site)

    async def append() -> None:
        async with open_store(tmp_path / "runs.db") as store:
            await store.append([run_started("01run", "run")])

    asyncio.run(append())
    assert "outside_bench" not in sys.modules
    assert asyncio.run(kept(tmp_path / "runs.db")) == (0, [])


def test_a_model_that_cannot_load_is_named_in_one_line_and_what_was_appended_stays(site: Path, tmp_path: Path):
    keeper(site, module=None)  # the entry point names a module the distribution does not have
    db = tmp_path / "runs.db"

    async def scenario() -> int:
        await start_keeping(db)
        with pytest.raises(PluginLoadError) as raised:
            async with open_store(db) as store:
                await store.append([run_started("01other", "other")])
        message = str(raised.value)
        assert "\n" not in message and MODEL in message and read_models.ENTRY_POINT_GROUP in message, message
        assert "ModuleNotFoundError" in message, message
        async with open_store(db, create=False, read_only=True) as store:
            return len(await store.list_streams())

    assert asyncio.run(scenario()) == 2, "both runs' streams are stored"
