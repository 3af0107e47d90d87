"""What a Persona2Web rubric looks for in a trajectory: the expected site, preference values and location."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from p2w_rt.replay.judges import JudgeError
from p2w_rt.replay.matching import SITE_ALIASES, expected_hosts, on_site, site_aliases, site_hosts
from p2w_rt.schemas import Location
from p2w_runtime.domain.trajectory import Trajectory

WEB_POINTS = 5.0
PREF_POINTS = 2.5
INTENT_POINTS = 10.0


class SiteLists(Protocol):
    """The two site settings a rubric reads (``SiteConfig``, ``SiteSettings``)."""

    @property
    def location_sites(self) -> Iterable[str]: ...

    @property
    def site_aliases(self) -> Mapping[str, Iterable[str]]: ...


@dataclass(frozen=True, slots=True)
class RubricTargets:
    websites: tuple[str, ...]
    hosts: tuple[str, ...]
    preferences: tuple[str, ...]
    location: Location | None
    """Set only when the expected site is location-aware and the query names a location."""

    @property
    def location_values(self) -> tuple[str, ...]:
        """What counts as the location in a text: the city, or the ZIP code."""
        if self.location is None:
            return ()
        return tuple(v for v in (self.location.city, self.location.zip) if v)

    @property
    def values(self) -> tuple[str, ...]:
        """Every value P_pref looks for: the preferences and the location's."""
        return (*self.preferences, *self.location_values)


def rubric_targets(trajectory: Trajectory, settings: SiteLists) -> RubricTargets:
    truth = trajectory.ground_truth
    if truth is None:
        raise JudgeError(
            f"episode {trajectory.stream} (task {trajectory.task_id}) has no ground truth: "
            "its query set's level-0 task was not available when it was recorded"
        )
    websites = tuple(truth.websites or [truth.website])
    hosts = expected_hosts(websites, site_aliases(SITE_ALIASES, settings.site_aliases))
    location_hosts = tuple(h for site in settings.location_sites for h in site_hosts(site))
    aware = any(on_site(f"http://{host}/", location_hosts) for host in hosts)
    return RubricTargets(websites, hosts, tuple(truth.preferences), truth.location if aware else None)


def rubric_metrics(points: dict[str, float], max_points: dict[str, float]) -> dict[str, float]:
    """Normalized figures from raw points: P_web, P_pref (location included), their mean, Intent, and SR by rule."""

    def share(prefixes: tuple[str, ...]) -> float:
        keys = [k for k in max_points if k.startswith(prefixes)]
        top = sum(max_points[k] for k in keys)
        return sum(points.get(k, 0.0) for k in keys) / top if top else 1.0

    p_web = share(("web.",))
    p_pref = share(("pref.", "location."))
    intent = share(("intent",))
    success = float(p_web == 1.0 and p_pref == 1.0 and intent == 1.0)
    return {
        "p_web": round(p_web, 6),
        "p_pref": round(p_pref, 6),
        "p_avg": round((p_web + p_pref) / 2, 6),
        "intent": round(intent, 6),
        "success": success,
    }
