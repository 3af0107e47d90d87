"""The CLI test modules' shared fixtures: a store holding a recorded example run, and for the viewer the demo's
database (or a test's own copy of it to change), served by a ``p2w-rt view`` process or by the viewer app in this
process, and a long episode served by a ``p2w-rt view`` process. The stores and servers are module-scoped, so a
module gets its own; the demo itself is made once per session (``demo_db``)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2w_runtime.demo.examples import example_run_bundles
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.view_support import LONG_STEPS, build_long_episode, demo_db, serving


@pytest.fixture(scope="module")
def example_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the recorded example run ``earlier`` (24 episodes, its pages with blobs), imported by
    ``p2w-rt import``."""
    path = tmp_path_factory.mktemp("example") / "p2w.db"
    done = p2w_rt(path, "import", str(example_run_bundles()[0]))
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The database ``p2w-rt demo`` writes."""
    return demo_db(tmp_path_factory.getbasetemp())[0]


@pytest.fixture
def demo_copy(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo's database the test may change, without the rows other tests' viewers kept in it."""
    copy = tmp_path / "view.db"
    shutil.copy(demo, copy)
    with raw_sqlite(copy) as conn:
        conn.execute("DELETE FROM summaries WHERE kind LIKE 'view.%'")
        conn.execute("DELETE FROM summary_marks WHERE model LIKE 'view.%'")
    return copy


@pytest.fixture(scope="module")
def demo_url(demo: Path) -> Iterator[str]:
    """The demo served by the viewer app in this process (uvicorn in a thread)."""
    from tests.helpers.view_app import serving_app  # the app and uvicorn, only for the modules that serve it

    with serving_app(demo) as (url, _):
        yield url


@pytest.fixture(scope="module")
def demo_process_url(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo served by a ``p2w-rt view`` process."""
    with serving(demo, cwd=tmp_path_factory.mktemp("view")) as url:
        yield url


@pytest.fixture(scope="module")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose one episode has ``LONG_STEPS`` steps."""
    db = tmp_path_factory.mktemp("long") / "long.db"
    asyncio.run(build_long_episode(db, LONG_STEPS))
    return db


@pytest.fixture(scope="module")
def long_url(long_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The long episode served by a ``p2w-rt view`` process."""
    with serving(long_db, cwd=tmp_path_factory.mktemp("long-view")) as url:
        yield url
