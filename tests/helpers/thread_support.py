"""FAISS's and torch's thread counts, which tests simulating another machine change: set, and restored after."""

from __future__ import annotations

from collections.abc import Iterator

import faiss
import pytest
import torch


def set_threads(count: int) -> None:
    faiss.omp_set_num_threads(count)
    torch.set_num_threads(count)


@pytest.fixture
def restore_threads() -> Iterator[None]:
    faiss_threads, torch_threads = faiss.omp_get_max_threads(), torch.get_num_threads()
    yield
    set_threads(faiss_threads)
    torch.set_num_threads(torch_threads)
