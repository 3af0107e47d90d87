"""The action grammar: parsing, extraction from LLM replies, WebArena's repeated-action rule."""

from __future__ import annotations

import pytest

from p2w_rt.schemas import ParsedAction
from p2w_runtime.actions import (
    ACTION_NAMES,
    ACTION_SPACE_PROMPT,
    AGENT_ACTIONS,
    BROWSER_ACTIONS,
    ActionParseError,
    extract_action,
    parse_action,
    repeated_action,
)
from p2w_runtime.actions._equivalence import equivalent


def pa(name: str, *args: str) -> ParsedAction:
    return ParsedAction(name=name, args=list(args))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click [12]", pa("click", "12")),
        ("  click   [ 007 ]  ", pa("click", "7")),
        ("Click[3]", pa("click", "3")),
        ("hover [4]", pa("hover", "4")),
        ("type [5] [blue shoes] [0]", pa("type", "5", "blue shoes", "0")),
        ("type [5] [blue shoes] [1]", pa("type", "5", "blue shoes", "1")),
        ("type [5] [blue shoes]", pa("type", "5", "blue shoes", "1")),
        ("type [5] [red [XL] shirt] [0]", pa("type", "5", "red [XL] shirt", "0")),
        ("type [5] [size [1]]", pa("type", "5", "size [1]", "1")),
        ("type [5] [1]", pa("type", "5", "1", "1")),
        ("type [5] [] [0]", pa("type", "5", "", "0")),
        ("type [5] [ padded ]", pa("type", "5", " padded ", "1")),
        ("press [Enter]", pa("press", "Enter")),
        ("press [ctrl+a]", pa("press", "Control+a")),
        ("press [Ctrl + Shift + Tab]", pa("press", "Control+Shift+Tab")),
        ("press [Meta+ArrowLeft]", pa("press", "Meta+ArrowLeft")),
        ("scroll [down]", pa("scroll", "down")),
        ("scroll [UP]", pa("scroll", "up")),
        ("scroll [direction=down]", pa("scroll", "down")),
        ("goto [http://shop.p2w.test/search?q=a]", pa("goto", "http://shop.p2w.test/search?q=a")),
        ("go_back", pa("go_back")),
        ("go_forward", pa("go_forward")),
        ("new_tab", pa("new_tab")),
        ("tab_focus [2]", pa("tab_focus", "2")),
        ("close_tab", pa("close_tab")),
        ("note [size M [EU 38] sold out]", pa("note", "size M [EU 38] sold out")),
        ("stop [The answer is [42]]", pa("stop", "The answer is [42]")),
        ("stop []", pa("stop", "")),
        ("stop [line one\nline two]", pa("stop", "line one\nline two")),
        ("memory_access [which shoe size?]", pa("memory_access", "which shoe size?")),
    ],
)
def test_parse_valid_actions(text: str, expected: ParsedAction) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty action"),
        ("   ", "empty action"),
        ("[12]", "starts with its name"),
        ("jump [3]", "unknown action 'jump'"),
        ("click", "click needs one argument in brackets"),
        ("click 12", "click needs one argument in brackets"),
        ("click [abc]", "click needs a numeric element id"),
        ("click [12] [Search button]", "click needs a numeric element id"),
        ("click [-3]", "click needs a numeric element id"),
        ("hover []", "hover needs a numeric element id"),
        ("type [abc] [x]", "type needs a numeric element id first"),
        ("type [3]", "type needs the text in brackets after the id"),
        ("type [3] hello", "type needs the text in brackets after the id"),
        ("scroll [left]", "scroll takes [up] or [down]"),
        ("press []", "press needs one key combination"),
        ("press [Control a]", "press needs one key combination"),
        ("press [Control+]", "malformed key combination"),
        ("goto []", "goto needs one URL"),
        ("goto [http://a b]", "goto needs one URL"),
        ("go_back [1]", "go_back takes no argument"),
        ("new_tab now", "new_tab takes no argument"),
        ("tab_focus [first]", "tab_focus needs a tab index"),
        ("note []", "note needs a non-empty text"),
        ("memory_access [  ]", "memory_access needs a non-empty text"),
        ("stop the answer", "stop needs one argument in brackets"),
    ],
)
def test_parse_errors_say_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(ActionParseError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_action(text)


def test_action_parse_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_action("fly [1]")


@pytest.mark.parametrize(
    "text",
    ["click [12]", "type [5] [red [XL] shirt] [0]", "press [Control+a]", "stop [done]", "go_back", "tab_focus [1]"],
)
def test_render_round_trips(text: str) -> None:
    parsed = parse_action(text)
    assert parsed.render() == text
    assert parse_action(parsed.render()) == parsed


def test_action_sets_partition_the_grammar() -> None:
    assert set(BROWSER_ACTIONS) | set(AGENT_ACTIONS) == set(ACTION_NAMES)
    assert not set(BROWSER_ACTIONS) & set(AGENT_ACTIONS)
    assert len(ACTION_NAMES) == 14
    for name in ACTION_NAMES:
        assert name in ACTION_SPACE_PROMPT


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("In summary, the next action I will perform is ```click [1234]```", "click [1234]"),
        ("Maybe ```click [1]```... no.\nFinal: ```\ntype [5] [shoes] [1]\n```", "type [5] [shoes] [1]"),
        ("```text\nscroll [down]\n```", "scroll [down]"),
        ("```\ngo_back\n```", "go_back"),
        ("```new_tab\n```", "new_tab"),
        ("Thought: the search box is [5].\nAction: type [5] [red dress] [1]", "type [5] [red dress] [1]"),
        ("Action: click [2]\nThen later\nAction: click [3]", "click [3]"),
        ("**Action:** hover [8]", "hover [8]"),
        ("action: stop [first line\nsecond line]\nThanks!", "stop [first line\nsecond line]"),
        ("click [9]", "click [9]"),
        ("  stop [N/A]  ", "stop [N/A]"),
    ],
)
def test_extract_action_from_replies(reply: str, action: str) -> None:
    assert extract_action(reply) == action


def test_extract_action_fails_without_an_action() -> None:
    with pytest.raises(ActionParseError, match="no action found"):
        extract_action("I think the user wants a dress, but I am not sure what to do.")


def test_a_reply_is_parsed_from_its_last_block() -> None:
    reply = "Options: ```click [1]``` or ```click [2]```. I choose:\n```stop [Size M [EU 38]]```"
    assert parse_action(extract_action(reply)) == pa("stop", "Size M [EU 38]")


def test_a_replys_action_that_breaks_the_grammar_is_refused() -> None:
    with pytest.raises(ActionParseError, match="click needs a numeric element id"):
        parse_action(extract_action("```click [the blue button]```"))


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("click [3]", "click [3]", True),
        ("click [3]", "click [4]", False),
        ("click [3]", "hover [3]", False),
        ("type [3] [a] [1]", "type [3] [b] [0]", True),
        ("type [3] [a]", "type [4] [a]", False),
        ("scroll [down]", "scroll [down]", True),
        ("scroll [down]", "scroll [up]", False),
        ("press [Enter]", "press [enter]", True),
        ("press [Enter]", "press [Tab]", False),
        ("goto [http://a]", "goto [http://a]", True),
        ("goto [http://a]", "goto [http://b]", False),
        ("go_back", "go_back", True),
        ("new_tab", "new_tab", True),
        ("tab_focus [0]", "tab_focus [1]", False),
        ("stop [x]", "stop [x]", True),
        ("stop [x]", "stop [y]", False),
        ("note [x]", "note [y]", False),
    ],
)
def test_equivalent_follows_webarena(a: str, b: str, same: bool) -> None:
    assert equivalent(parse_action(a), parse_action(b)) is same
    assert equivalent(parse_action(b), parse_action(a)) is same


def actions(*texts: str) -> list[ParsedAction]:
    return [parse_action(text) for text in texts]


def test_repeated_action_needs_k_in_a_row() -> None:
    assert not repeated_action([])
    assert not repeated_action(actions("click [3]", "click [3]"))
    assert repeated_action(actions("click [3]", "click [3]", "click [3]"))
    assert repeated_action(actions("go_back", "click [3]", "click [3]", "click [3]"))
    assert not repeated_action(actions("click [3]", "click [3]", "scroll [down]", "click [3]"))
    assert not repeated_action(actions("click [3]", "click [3]", "click [3]", "click [4]"))
    assert repeated_action(actions("scroll [down]", "scroll [down]"), k=2)


def test_repeated_type_counts_anywhere_in_the_episode() -> None:
    history = actions("type [5] [a] [1]", "click [2]", "type [5] [b] [1]", "scroll [down]", "type [5] [c] [0]")
    assert repeated_action(history)
    assert not repeated_action(history[:-1])
    assert not repeated_action([*history[:-1], parse_action("type [6] [c] [0]")])
