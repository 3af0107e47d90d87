"""The browser layer: real Chromium through Playwright's async API.

``BrowserSession`` launches one Chromium; ``new_context`` gives each episode an ``EpisodeBrowser`` with its own
cookies and HAR. The agent loop calls ``observe()`` (numbered accessibility text, screenshot, block detection),
``execute(action)`` for the grammar's browser actions, ``final_state()`` and ``close()`` (the scrubbed HAR).
"""

from p2w_runtime.browser._axtext import AxLine, bound_text, lines_to_text, render_snapshot
from p2w_runtime.browser._blocking import FINAL_CONFIRMATION_ERROR, FINAL_CONFIRMATION_SELECTOR, detect_block
from p2w_runtime.browser._capture import CapturedPage, answer_links, capture_in, capture_pages
from p2w_runtime.browser._chromium import LAUNCH_ARGS, find_chromium
from p2w_runtime.browser._episode import EpisodeBrowser, EpisodeSettings
from p2w_runtime.browser._errors import BrowserUnavailable
from p2w_runtime.browser._har import SECRET_HEADERS, scrub_har
from p2w_runtime.browser._session import BrowserSession
from p2w_runtime.browser._types import ExecResult, ExecStatus, FinalStateData, ObservationData

__all__ = [
    "CapturedPage",
    "FINAL_CONFIRMATION_ERROR",
    "FINAL_CONFIRMATION_SELECTOR",
    "LAUNCH_ARGS",
    "SECRET_HEADERS",
    "AxLine",
    "BrowserSession",
    "BrowserUnavailable",
    "EpisodeBrowser",
    "EpisodeSettings",
    "ExecResult",
    "ExecStatus",
    "FinalStateData",
    "ObservationData",
    "answer_links",
    "bound_text",
    "capture_in",
    "capture_pages",
    "detect_block",
    "find_chromium",
    "lines_to_text",
    "render_snapshot",
    "scrub_har",
]
