"""Writes v1.db and v1.json: a database written by the store's first table layout, kept so later code proves
it still opens it (tests/store/test_fixture_db.py). Run once, from the repository root, with the code of that time:

    python tests/data/fixture_dbs/make_v1.py

Layout 1: tables events, blobs, run_labels, claims; append-only triggers; WAL. Content: the bundled example
trajectories of both Persona2Web runners imported as two runs, judged with rubric-rules and classified with
the rules classifier; and one observation with a page blob (the imports carry none), in stream ``pages``.
v1.json pins what the test checks (counts, head digests) as this code saw them.
Never regenerate it with newer code: that would test nothing.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DB = HERE / "v1.db"


def p2w(*args: str) -> str:
    code = "import sys; from cli import main; sys.argv[0] = 'p2w-rt'; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "--db", str(DB), *args], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return done.stdout


async def add_page() -> None:
    from p2w_rt.schemas import NewEvent, Observation, blob_hash
    from p2w_runtime.store import open_store

    page = "".join(f"[{i}] link 'item {i}' focused: False\n" for i in range(200)).encode()
    observation = Observation(step=1, url="http://127.0.0.1/page", title="page", ax_tree=blob_hash(page))
    async with open_store(DB, create=False) as store:
        await store.append([NewEvent(stream="pages", payload=observation)], {blob_hash(page): page})


async def facts() -> dict[str, object]:
    from p2w_runtime.domain import episodes_of, list_runs
    from p2w_runtime.store import head_digest, open_store

    async with open_store(DB, create=False, read_only=True) as store:
        runs = await list_runs(store)
        events, blobs = await store.count()
        pages = [e async for e in store.read_stream("pages")]
        return {
            "events": events,
            "blobs": blobs,
            "page_blob": pages[0].blobs[0],
            "runs": {
                r.label: {
                    "run_id": r.run_id,
                    "head_digest": await head_digest(store, r.run_id),
                    "counted": [e.task_id for e in await episodes_of(store, r.run_id)],
                }
                for r in runs
            },
        }


def main() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{DB}{suffix}").unlink(missing_ok=True)
    for fmt, label in (("p2w-agentoccam", "agentoccam"), ("p2w-browser-use", "browser-use")):
        p2w("import-trajectories", "--format", fmt, "--examples", "--label", label)
        p2w("replay", label, "--judge", "rubric-rules")
        p2w("classify", label, "--classifier", "rules")
    sys.path.insert(0, str(ROOT))
    asyncio.run(add_page())
    with sqlite3.connect(DB) as conn:  # fold the WAL into the file: one file to commit
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    Path(f"{DB}-wal").unlink(missing_ok=True)
    Path(f"{DB}-shm").unlink(missing_ok=True)
    (HERE / "v1.json").write_text(json.dumps(asyncio.run(facts()), indent=2) + "\n")


if __name__ == "__main__":
    main()
