"""The browser layer: real Chromium through Playwright's async API.

``BrowserSession`` launches one Chromium; ``new_context`` gives each episode an ``EpisodeBrowser`` with its own
cookies and HAR. The agent loop calls ``observe()`` (numbered accessibility text, screenshot, block detection),
``execute(action)`` for the grammar's browser actions, ``final_state()`` and ``close()`` (the scrubbed HAR).
"""

from p2w_runtime.browser._capture import CapturedPage, answer_links
from p2w_runtime.browser._chromium import LAUNCH_ARGS, find_chromium
from p2w_runtime.browser._episode import EpisodeBrowser, EpisodeSettings
from p2w_runtime.browser._errors import BrowserGone, BrowserUnavailable
from p2w_runtime.browser._har import scrub_har
from p2w_runtime.browser._profile import close_profile, running_with
from p2w_runtime.browser._session import BrowserSession, capture_pages
from p2w_runtime.browser._types import ExecResult, FinalStateData, ObservationData

__all__ = [
    "CapturedPage",
    "LAUNCH_ARGS",
    "BrowserGone",
    "BrowserSession",
    "BrowserUnavailable",
    "EpisodeBrowser",
    "EpisodeSettings",
    "ExecResult",
    "FinalStateData",
    "ObservationData",
    "answer_links",
    "capture_pages",
    "close_profile",
    "find_chromium",
    "running_with",
    "scrub_har",
]
