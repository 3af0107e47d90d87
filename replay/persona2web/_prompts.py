"""The LLM judges' prompts: Persona2Web's appendix-E rubric and the two meta-evaluation baselines.

Templates are constants; their hash (``replay.judges.template_hash``) is part of each judge's config hash, so
editing a prompt invalidates cached judgments made with the old one.
"""

from __future__ import annotations

RUBRIC_SYSTEM = """\
You are the judge of Persona2Web's reasoning-aware evaluation of a personalized web agent (role: judge).
The agent received an ambiguous user request and could consult the user's browsing history: it asked
history queries, a retriever returned history entries, and a generator wrote a memory answer. You see the
full trajectory, reasoning traces included. Score it with the rubric below, using only what the trajectory
shows, and cite the [E<n>] tags of the events behind each score in "evidence".

P_web: website personalization
- web_retrieval (0 or 5): 5 if the agent asked appropriate history queries and the expected website appears
  in any memory response (a retrieved entry or a memory answer); else 0.
- web_utilization (0 or 5): 5 if the agent navigated to the expected website; else 0.

P_pref: preference personalization, for each expected preference N
- pref_N_retrieval (0 or 2.5): 2.5 if a history query asked about the preference's category and the
  expected value appears in a memory response; else 0.
- pref_N_utilization (0 or 2.5): 2.5 if the expected value was applied in the agent's reasoning or actions,
  or at least attempted (typed, searched, filtered, stated as a constraint it acts on); else 0. A value that
  only appears in a memory response was retrieved, not applied.
- location_retrieval and location_utilization (0 or 2.5 each), only when the request lists them: the same
  two criteria for the user's city, state or ZIP code on this location-aware website.

Intent: task completion
- intent (0, 5 or 10): 10 if the goal of the request was achieved; 5 if the decisive action was attempted
  but blocked by an external factor (out of stock, CAPTCHA, site error); 0 otherwise (wrong item, task
  abandoned, a constraint violated).

Reply with only the JSON object."""

ACTION_WISE_SYSTEM = """\
You are a judge of a personalized web agent (role: judge), in the action-wise setting: you see the action
the agent took at every step and the page it was on, but neither its reasoning nor its history accesses.
Score only what the actions show, and cite the [E<n>] tags of the events behind each score in "evidence".

- web_utilization (0 or 5): 5 if the agent navigated to the expected website; else 0.
- pref_N_utilization (0 or 2.5): 2.5 if the actions apply the expected value N, or at least attempt to
  (typed, searched, filtered); else 0.
- location_utilization (0 or 2.5), only when the request lists it: the same for the user's city or ZIP code.
- intent (0, 5 or 10): 10 if the goal of the request was achieved; 5 if the decisive action was attempted but
  blocked by an external factor (out of stock, CAPTCHA, site error); 0 otherwise.

Reply with only the JSON object."""

OUTCOME_SYSTEM = """\
You are a judge of a personalized web agent (role: judge), in the outcome-based setting: you see only the
agent's final action, the reasoning it gave for it, and where the episode ended. Score only what that
shows, and cite the [E<n>] tags of the events behind each score in "evidence".

- web_utilization (0 or 5): 5 if the agent ended on the expected website; else 0.
- pref_N_utilization (0 or 2.5): 2.5 if the final action or its reasoning applies the expected value N; else 0.
- location_utilization (0 or 2.5), only when the request lists it: the same for the user's city or ZIP code.
- intent (0, 5 or 10): 10 if the goal of the request was achieved; 5 if the decisive action was attempted but
  blocked by an external factor (out of stock, CAPTCHA, site error); 0 otherwise.

Reply with only the JSON object."""

USER_TEMPLATE = """\
User request (ambiguity level {level}): {query}

Expected website: {websites}
Expected preferences:
{preferences}
{location}
Trajectory ({view}):
{trajectory}"""
