"""What every producer of derived results is (judges, classifiers, and the next ones).

A producer turns one episode's trajectory into one derived event. It has an id, a version and a typed,
frozen config (a pydantic model), and it reads its settings only through that config: whatever its output
depends on is a config field, and the cache key hashes every field, so no setting can be left out of the key
(the LLM classifier's prompt once depended on the site aliases while its key did not). The version changes
whenever the producer's rules change for the same trajectory and config.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue

from p2w_rt.replay.derived._stream import CacheKey, Derived
from p2w_rt.schemas import LlmRole, content_hash
from p2w_runtime.domain import EpisodeRef
from p2w_runtime.domain.trajectory import Trajectory

if TYPE_CHECKING:  # types only: importing the LLM client costs a command that never calls one (startup.md)
    from p2w_runtime.llm import Sink, UsageTotals

M = TypeVar("M", bound=BaseModel)


class StructuredLlm(Protocol):
    """The LLM seam of a producer: complete one structured request; its calls go to the scope's sink."""

    totals: UsageTotals

    async def complete_json(
        self,
        role: LlmRole,
        messages: list[dict[str, str]],
        schema: type[M],
        *,
        params: Mapping[str, JsonValue] | None = None,
    ) -> M: ...


class LlmEndpoint(Protocol):
    """An endpoint a pass scopes per result (``p2w_runtime.llm.LlmClient``), so each result records its calls."""

    def scoped(self, sink: Sink | None) -> StructuredLlm: ...

    async def aclose(self) -> None: ...


LlmFactory = Callable[[], LlmEndpoint]
"""Returns the endpoint to use; called on first need, so a rules-only or fully cached pass needs none."""


KeyedFields = dict[str, str | None]
"""``Producer.keyed``: episode stream, task, trajectory hash, ``{kind}_id``, ``{kind}_version``, config hash,
status, error."""


NO_LLM = "this result needs an LLM, and none is configured (--model / --base-url)"


class ProducerError(Exception):
    """This trajectory cannot be given a result (no ground truth, no task config...): recorded as a failed one."""


class ProducerConfig(BaseModel):
    """Every setting a producer's output depends on; all fields are hashed into the cache key."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


@dataclass(slots=True)
class ProduceContext:
    """What a producer may use besides the trajectory: the store's blobs, and an LLM scoped to this result."""

    get_blob: Callable[[str], Awaitable[bytes]]
    llm: StructuredLlm | None = None

    def need_llm(self) -> StructuredLlm:
        if self.llm is None:
            raise ProducerError(NO_LLM)
        return self.llm


ConfigT = TypeVar("ConfigT", bound=ProducerConfig)
VerdictT = TypeVar("VerdictT")
SettingsT = TypeVar("SettingsT")


class Producer(ABC, Generic[SettingsT, ConfigT, VerdictT]):
    """One versioned, config-hashed producer of one derived result per episode.

    ``kind`` ("judge", "classifier") names the family: its payload type, stream and the hash's namespace.
    A subclass implements ``configure`` (user settings -> its config) and ``produce``; a family implements
    ``failed`` and ``payload``.
    """

    kind: ClassVar[str]
    id: ClassVar[str]
    version: ClassVar[str]
    description: ClassVar[str] = ""
    uses_llm: ClassVar[bool] = False

    def __init__(self, settings: SettingsT) -> None:
        self.config: ConfigT = self.configure(settings)

    @abstractmethod
    def configure(self, settings: SettingsT) -> ConfigT:
        """The part of the user's settings this producer uses; it keeps nothing else."""

    def task_config(self, task_id: str) -> dict[str, JsonValue]:
        """Per-task settings the output depends on (WebArena's eval blocks); keyed by task id, not trajectory,
        so a cache check needs no events read."""
        return {}

    def config_hash(self, task_id: str) -> str:
        body: dict[str, JsonValue] = {self.kind: self.id, "config": self.config.model_dump(mode="json")}
        return content_hash({**body, **self.task_config(task_id)})

    def cache_key(self, episode: Trajectory | EpisodeRef) -> CacheKey:
        return (episode.hash, self.id, self.version, self.config_hash(episode.task_id))

    def claim(self, run_id: str) -> str:
        """The claim a pass by this producer holds over ``run_id`` (``DerivedPass.exclusive``)."""
        digest = content_hash(self.config.model_dump(mode="json"))[:16]
        return f"{self.kind}/{run_id}/{self.id}/{self.version}/{digest}"

    def needs_llm(self, trajectory: Trajectory) -> bool:
        return self.uses_llm

    def needs_io(self, trajectory: Trajectory) -> bool:
        """Whether producing waits on I/O (LLM, browser): such results are made concurrently, the rest inline."""
        return self.needs_llm(trajectory)

    @abstractmethod
    async def produce(self, trajectory: Trajectory, ctx: ProduceContext) -> VerdictT:
        """The result for one trajectory; raise ``ProducerError`` when it cannot be made."""

    @abstractmethod
    def failed(self, error: str, cost_usd: float | None) -> VerdictT:
        """The failed result recorded when ``produce`` raised ``ProducerError`` or the model answered unusably."""

    @abstractmethod
    def payload(self, trajectory: Trajectory, key: CacheKey, verdict: VerdictT) -> Derived:
        """The event payload appended for ``verdict`` (``Judgment``, ``ErrorClassified``)."""

    def keyed(self, trajectory: Trajectory, key: CacheKey, status: str, error: str | None) -> KeyedFields:
        """The fields every derived payload carries: what was derived from, by whom, and how it went."""
        return {
            "episode_stream": trajectory.stream,
            "task_id": trajectory.task_id,
            "trajectory_hash": trajectory.hash,
            f"{self.kind}_id": self.id,
            f"{self.kind}_version": self.version,
            "config_hash": key[3],
            "status": "ok" if status == "ok" else "failed",
            "error": error,
        }

    async def aclose(self) -> None:  # noqa: B027 - most producers open nothing
        """Release what the producer opened (a browser); called once after a pass."""
