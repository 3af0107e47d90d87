"""The bundled example runs import and rerun identical with today's agent code, from their own dataset, also as
another machine would rerun them: other thread counts, an index cache whose vectors differ in the last bits, and
after ``export`` / ``import`` into another folder and database.

They were recorded by ``scripts/make_example_runs.py``; when the agent or the sites change so that they no
longer rerun identical, or the run format so that they no longer import, this fails: re-record them.
"""

from __future__ import annotations

import json
from pathlib import Path

import faiss
import numpy as np
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.retrieval import load_embedder
from p2w_runtime.retrieval._cache import EMBEDDINGS_FILE, MANIFEST_FILE, CacheKey, store
from tests.helpers.thread_support import restore_threads, set_threads  # noqa: F401 (restore_threads: a fixture)

NOISE = 1e-6
"""Per component of every bank vector: moves each score by about 6e-7, splitting ties a machine would not."""


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def rerun_identical(db: Path, label: str, cache: Path) -> None:
    args = ["--db", str(db), "rerun", label, "--cache-dir", str(cache), "--json"]
    rerun = CliRunner().invoke(main, args, catch_exceptions=False)
    report = json.loads(rerun.stdout)
    assert [(e["task_id"], e["mismatch"]) for e in report["episodes"] if e["mismatch"]] == []
    assert rerun.exit_code == 0 and report["identical"] is True and len(report["episodes"]) == 24


def as_if_built_elsewhere(cache: Path, seed: int) -> dict[Path, bytes]:
    """Every cached index rewritten with its vectors moved by ±NOISE and normalised again, as another machine's
    encoder would have built it; returns the embeddings files written, to check the rerun served them."""
    rng = np.random.default_rng(seed)
    written = {}
    for folder in sorted(p.parent for p in cache.glob(f"*/{MANIFEST_FILE}")):
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
        key = CacheKey(*(manifest[f] for f in ("model_id", "model_fingerprint", "bank_hash", "count", "dim")))
        vectors = np.load(folder / EMBEDDINGS_FILE)
        moved = vectors + rng.uniform(-NOISE, NOISE, vectors.shape).astype(np.float32)
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        index = faiss.IndexFlatIP(key.dim)
        index.add(moved)
        store(folder, key, moved, index)
        written[folder / EMBEDDINGS_FILE] = (folder / EMBEDDINGS_FILE).read_bytes()
    assert len(written) == 4, "one index per sample persona"
    return written


def threads(count: int) -> None:
    set_threads(count)
    load_embedder().forget_queries()  # the rerun encodes its queries again, with these threads


@pytest.mark.usefixtures("restore_threads")
@pytest.mark.parametrize("bundle", example_run_bundles(), ids=lambda p: p.stem)
def test_a_bundled_run_reruns_identical_here_and_as_another_machine_would(bundle: Path, tmp_path: Path) -> None:
    cache, db = tmp_path / "cache", tmp_path / "here" / "examples.db"
    for folder in ("here", "elsewhere", "there"):
        (tmp_path / folder).mkdir()
    invoke("--db", str(db), "import", str(bundle))
    threads(1)
    rerun_identical(db, bundle.stem, cache)  # from the files it carries; builds the index cache

    written = as_if_built_elsewhere(cache, seed=len(bundle.stem))
    threads(3)
    rerun_identical(db, bundle.stem, cache)
    assert {path: path.read_bytes() for path in written} == written, "the rerun searched the moved vectors"

    moved = tmp_path / "elsewhere" / "run.p2w"
    invoke("--db", str(db), "export", bundle.stem, "-o", str(moved))
    other = tmp_path / "there" / "other.db"
    invoke("--db", str(other), "import", str(moved))
    threads(2)
    rerun_identical(other, bundle.stem, cache)
