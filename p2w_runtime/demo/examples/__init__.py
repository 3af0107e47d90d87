"""Small example trajectories of both Persona2Web runner formats, with the task files and memory banks they need.

Written for this project (three fictional personas); they feed the tests and the README's
first command until runs are recorded. Layout: ``tasks/personalization_{1,2,3}/``,
``history/{persona}.json``, ``trajectories/{agentoccam,browser_use}/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
_FORMAT_DIRS = {"p2w-agentoccam": "agentoccam", "p2w-browser-use": "browser_use"}


@dataclass(frozen=True, slots=True)
class ExamplePaths:
    tasks_dir: Path
    history_dir: Path
    trajectories_dir: Path

    def trajectories(self, fmt: str) -> list[Path]:
        """The example files of one format (``p2w-agentoccam`` or ``p2w-browser-use``), sorted."""
        try:
            folder = _FORMAT_DIRS[fmt]
        except KeyError:
            raise ValueError(f"no examples for format {fmt!r}; known: {', '.join(_FORMAT_DIRS)}") from None
        return sorted((self.trajectories_dir / folder).glob("*.json"))


def example_run_bundles() -> list[Path]:
    """The two recorded example runs the demo starts from (``earlier``, ``later``), as export bundles.

    Made by ``scripts/make_example_runs.py``: real recordings of the sample tasks with a scripted model.
    """
    return [ROOT / "runs" / "earlier.p2w", ROOT / "runs" / "later.p2w"]


def example_paths() -> ExamplePaths:
    return ExamplePaths(tasks_dir=ROOT / "tasks", history_dir=ROOT / "history", trajectories_dir=ROOT / "trajectories")


__all__ = ["ExamplePaths", "example_paths", "example_run_bundles"]
