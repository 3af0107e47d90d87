"""Reading the model's replies: what the agent takes from planner, generator and pre-execution answers."""

from __future__ import annotations

from p2w_runtime.agent._replies import parse_generator, parse_queries, parse_rewrite, planner_thought


def test_planner_thought_stops_at_the_action() -> None:
    reply = "Thought: The user wears size M,\nso I filter.\nAction: ```goto [http://threads.p2w.test/?size=M]```"
    assert planner_thought(reply) == "The user wears size M,\nso I filter."
    assert planner_thought("**Action:** click [3]") == ""
    assert planner_thought("Thought: open it ```click [4]```") == "open it"


def test_generator_keeps_only_cited_ids_that_were_shown() -> None:
    parsed = parse_generator("Answer: Usually size M.\nCited: 12, 7, 12, 99", known_ids={7, 12})
    assert parsed.answer == "Usually size M." and parsed.cited == [12, 7]
    bare = parse_generator("The history does not say.", known_ids={1})
    assert bare.answer == "The history does not say." and bare.cited == []


def test_pre_execution_queries_are_bounded_and_none_means_none() -> None:
    reply = "Queries:\n- where I buy leggings\n2) my leggings size\n* my budget\n- my city\n- rating\n- extra"
    assert parse_queries(reply, 5) == ["where I buy leggings", "my leggings size", "my budget", "my city", "rating"]
    assert parse_queries("Queries: none", 5) == [] and parse_queries("Queries: None.", 5) == []


def test_rewrite_falls_back_to_the_original_task() -> None:
    assert parse_rewrite("Task: At threads.p2w.test, find leggings in size M", "x") == (
        "At threads.p2w.test, find leggings in size M"
    )
    assert parse_rewrite("I would rather not.", "the original task") == "the original task"
