"""The WebArena judge's prompts: fuzzy matching of an answer, and an unachievable task's reason (role: judge).

Their hash is part of the judge's config hash, so editing a prompt invalidates cached judgments made with it.
"""

FUZZY_SYSTEM = """\
You grade a web agent's answer against a reference answer (role: judge). The answer may use different
wording; decide whether it is semantically equivalent to the reference for the question asked. "N/A" means
the task is not achievable. Reply with only the JSON object: {"verdict": "correct" | "incorrect" |
"partially correct", "reason": "..."}."""

FUZZY_USER = "Question: {intent}\nReference answer: {reference}\nAgent answer: {answer}"

UNACHIEVABLE_SYSTEM = """\
A web agent reported that a task cannot be done (role: judge). Decide whether the reason it gives matches
the reference reason. Reply with only the JSON object: {"same_reason": true | false, "reason": "..."}."""

UNACHIEVABLE_USER = "Task: {intent}\nReference reason: {reference}\nAgent answer: {answer}"
