"""What ``record`` is asked to do: the options of one recording, as the CLI (or a resume) gives them.

Its own module so that both ``_record`` (which carries it out) and ``_resume`` (which rebuilds it from the
recorded run) read it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.llm import RetryPolicy


@dataclass(frozen=True)
class RecordRequest:
    tasks_dir: Path
    history_dir: Path
    model: str
    label: str | None = None
    config: AgentConfig = field(default_factory=AgentConfig)
    base_url: str | None = None
    api_key: str | None = None
    level: int | None = None
    task_ids: tuple[str, ...] = ()
    limit: int | None = None
    concurrency: int = 4
    chromium: str | None = None
    embedder: str | None = None
    cache_dir: Path | None = None
    prices: Path | None = None
    resume: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    llm_timeout_s: float = 120.0
    worker: bool = False
    """Record the run labelled ``label`` together with other workers (``_worker.py``)."""
    given: frozenset[str] = frozenset()
    """Options the user gave (``--level``, ...): on resume, those must agree with the recorded run."""
    profiles: Path | None = None
    """AgenticShop user profiles: each one a curation task starting at ``start_url`` (instead of ``tasks_dir``)."""
    start_url: str | None = None
    """Where curation tasks start (the CLI's default: the demo shop); needed with ``profiles``."""
