"""Browser-Use (``browser_use.Agent``) recorded live through the recording API (docs/design/browser-use.md).

``record_browser_use`` is ``p2w-rt record --agent browser-use``; ``StepRecorder``, ``recorded_chat`` and
``memory_tools`` are the pieces for recording a Browser-Use agent of one's own. Browser-Use itself is imported only
when an episode starts, so this package loads without it.
"""

from p2w_runtime.integrations.browser_use._recorder import (
    BROWSER_USE_VERSION,
    MEMORY_ACTION,
    StepRecorder,
    check_version,
    memory_tools,
    recorded_chat,
)
from p2w_runtime.integrations.browser_use._run import (
    AGENT,
    AGENT_SETTINGS,
    CancelledInside,
    browser_use_session,
    not_cancelled_inside,
    record_browser_use,
    record_episode,
    remove_agent_files,
)

__all__ = [
    "AGENT",
    "AGENT_SETTINGS",
    "BROWSER_USE_VERSION",
    "CancelledInside",
    "MEMORY_ACTION",
    "StepRecorder",
    "browser_use_session",
    "check_version",
    "memory_tools",
    "not_cancelled_inside",
    "record_browser_use",
    "record_episode",
    "recorded_chat",
    "remove_agent_files",
]
