"""The action-space text for agent prompts, kept next to the grammar so the two cannot drift apart."""

from __future__ import annotations

ACTION_SPACE_PROMPT = """\
Actions (element ids are the numbers in brackets in the accessibility tree, e.g. [12]):
- click [id]: click the element.
- type [id] [text] [0|1]: replace the content of a field with text; the last argument presses Enter afterwards \
(1, the default) or not (0). On a drop-down list, selects the option with that label.
- hover [id]: move the mouse over the element.
- press [keys]: press a key combination, e.g. press [Enter] or press [Control+a].
- scroll [up|down]: scroll the page by one screen.
- goto [url]: open a URL in the current tab.
- go_back / go_forward: move through the current tab's history.
- new_tab: open an empty tab; tab_focus [n]: switch to tab n (0-based); close_tab: close the current tab.
- note [text]: write down something you found, for later steps.
- memory_access [query]: ask the user's history (only when history access is enabled).
- stop [answer]: finish the task; put the answer in brackets, or leave them empty if none is needed.
Never submit a payment or a final confirmation (order, booking, purchase): stop on the page right before it.
End your reply with exactly one action in a fenced block, for example: ```click [12]```"""
