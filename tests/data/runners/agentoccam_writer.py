"""AgentOccam's output folders as ``agent_runner.py`` (``run_single_task``) and ``AgentOccam.log_step`` write them."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

AGENTOCCAM_ROOT = "/home/p2w/Persona2Web/AgentOccam"
LEVEL_FOLDER = {"1": "personalization_1", "2": "personalization_2", "3": "personalization_3"}


# -- AgentOccam: agent_runner.py run_single_task + AgentOccam.log_step ---------------------------


def agentoccam_name(memory_mode: str | None, model: str, task_id: str) -> str:
    """``{mode_prefix}_{model_tag_norm}_{task_id}.json``: pre / on / base, every non-alphanumeric removed."""
    mode_prefix = "pre" if memory_mode == "pre-execution" else ("on" if memory_mode == "on-demand" else "base")
    return f"{mode_prefix}_{re.sub(r'[^A-Za-z0-9]+', '', model)}_{task_id}.json"


def agentoccam_step(
    objective: str, url: str, status: dict[str, Any], plan: str, elements: dict[str, str], actors: list | None = None
) -> dict[str, Any]:
    """``log_step(status=..., plan=..., **filtered_elements[, **actor_keys])``: spaces in keys become ``_``.

    ``filtered_elements`` keeps only ``interaction_history_summary``, ``observation_description``,
    ``reason``, ``action`` of the actor's elements, whose keys are spaced
    (``observation description``), so only ``reason`` and ``action`` survive.
    """
    selected = ["interaction_history_summary", "observation_description", "reason", "action"]
    kwargs: dict[str, Any] = {"plan": plan, **{k: elements[k] for k in selected if k in elements}}
    for i, actor in enumerate(actors or []):
        kwargs.update({f"actor {i}:{k}": actor[k] for k in actor if k in selected})
    data = {"objective": objective, "url": url, **status}
    data.update({k.replace(" ", "_"): v for k, v in kwargs.items()})
    return data


def status(done: bool, num_actions: int) -> dict[str, Any]:
    """``WebArenaEnvironmentWrapper.status()``; evaluation is removed, so reward is always 0."""
    return {"done": done, "reward": 0.0, "success": float(0.0 > 0), "num_actions": num_actions}


def write_agentoccam(
    dstdir: Path,
    *,
    model: str,
    memory_mode: str | None,
    task_id: str,
    trajectory: list[dict[str, Any]],
    memory: list[dict[str, Any]],
    elapsed: float,
) -> None:
    """The ``config.logging`` branch: CAPTCHA stops go to ``captcha_stopped/``, then ``log_run``."""
    action_text = str(trajectory[-1]["action"]).lower() if trajectory else ""
    captcha = "stop" in action_text and any(
        m in action_text for m in ("captcha", "automatically stopped", "error condition detected")
    )
    folder = dstdir / "captcha_stopped" if captcha else dstdir
    folder.mkdir(parents=True, exist_ok=True)
    log_file = folder / agentoccam_name(memory_mode, model, task_id)
    config_file = f"{AGENTOCCAM_ROOT}/config_files/{LEVEL_FOLDER[task_id[-1]]}/{task_id}.json"
    structured = [
        {"Memory Query": e["query"], "Retrieved memory index": e["retrieved_indices"], "Memory Retrieved": e["answer"]}
        for e in memory
    ]
    log_data = {
        "task": config_file,
        "id": task_id,
        "model": model,
        "type": "AgentOccam",
        "trajectory": trajectory,
        "memory": structured,
    }
    # webagents_step.utils.data_prep.log_run (upstream AgentOccam): json.dumps(indent=4), then a summary.csv row
    log_file.write_text(json.dumps(log_data, indent=4))
    last = trajectory[-1] if trajectory else status(True, 0)
    row = {
        "task": config_file,
        "task_id": task_id,
        "model": model,
        "type": "AgentOccam",
        "logfile": re.search(r"/([^/]+/[^/]+\.json)$", str(log_file)).group(1),  # type: ignore[union-attr]
        "execution_time": round(elapsed, 2),
        **{k: last[k] for k in ("done", "reward", "success", "num_actions")},
    }
    summary = dstdir / "summary.csv"
    new = not summary.exists()
    with summary.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def agentoccam_on_demand(root: Path) -> None:
    dstdir = root / "on-demand_gpt41"
    dstdir.mkdir(parents=True)
    (dstdir / "on-demand_gpt41.yml").write_text(
        "logging: True\nlogdir: logs\nlogname: on-demand_gpt41\nmax_steps: 25\n"
        "agent:\n  type: AgentOccam\n  memory_mode: on-demand\n  actor:\n    model: gpt-4.1\n"
    )
    model, mode = "gpt-4.1", "on-demand"

    objective = (
        "Query: Find men's trail running shoes in my usual shoe size within my usual budget for running shoes, "
        "and add the best-reviewed pair to the cart."
    )
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    search = "http://search.p2w.test/"
    results = "http://search.p2w.test/search?q=threads+trail+running+shoes"
    target = "http://threads.p2w.test/search?q=trail+running+shoes&category=running-shoes&size=10.5&max_price=130"
    answer = "Ridgeline Men's Trail Running Shoes, size 10.5, $119 (under $130), added to the cart"
    # The memory access is a note step of the env (num_actions 1) but never logged as a trajectory step.
    write_agentoccam(
        dstdir,
        model=model,
        memory_mode=mode,
        task_id="Tomas_Reyes_B1",
        memory=[
            {
                "query": "user's running shoe size and budget",
                "retrieved_indices": [29, 126, 291],
                "answer": "The user wears size 10.5 (US 10½) trail running shoes, caps them around $130 and lives in "
                "Denver, CO 80202.",
            }
        ],
        trajectory=[
            agentoccam_step(
                objective,
                search,
                status(False, 2),
                plan,
                {"reason": "Search for the shoe store.", "action": "type [12] [threads trail running shoes] [1]"},
            ),
            agentoccam_step(
                objective,
                results,
                status(False, 3),
                plan,
                {"reason": "The threads store is the first result.", "action": "click [31]"},
            ),
            agentoccam_step(
                objective,
                "http://threads.p2w.test/",
                status(False, 4),
                plan,
                {"reason": "Filter by size 10.5 and a $130 budget.", "action": f"goto [{target}]"},
            ),
            agentoccam_step(objective, target, status(False, 5), plan,
                            {"reason": "Note the best pair.", "action": "note [Ridgeline 450, 4.8 stars, $119]"}),
            # a model number typed after the agent noted it on the page: a product fact, not a preference
            agentoccam_step(objective, target, status(False, 6), plan,
                            {"reason": "Find the 450 in the listing.", "action": "type [5] [ridgeline 450] [0]"}),
            agentoccam_step(objective, target, status(False, 7), plan,
                            {"reason": "Open the 450.", "action": "click [77]"}),
            agentoccam_step(
                objective,
                "http://threads.p2w.test/product/ridgeline-450",
                status(True, 8),
                plan,
                # strict judge mode: the longest note is prepended to the selected action
                {"reason": "The Ridgeline is the best pair in size 10.5 under $130; it ships to Denver, CO 80202.",
                 "action": f"note [Ridgeline, size 10.5, $119]\nstop [{answer}]"},
            ),
        ],
        elapsed=81.37,
    )  # fmt: skip

    objective = "Query: Find penne that fits my dietary restriction and my usual sourcing standard, and add two boxes."
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    write_agentoccam(
        dstdir,
        model=model,
        memory_mode=mode,
        task_id="Lena_Fischer_A1",
        memory=[],
        trajectory=[
            agentoccam_step(objective, search, status(False, 1), plan,
                            {"reason": "Search the grocery store.", "action": "type [12] [basket penne] [1]"}),
            # predict_action after three invalid actions in a row
            agentoccam_step(objective, "http://search.p2w.test/search?q=basket+penne", status(True, 2), plan,
                            {"action": "stop [Too many invalid actions attempted]",
                             "reason": "Stopped due to 3 consecutive invalid actions"}),
        ],
        elapsed=40.02,
    )  # fmt: skip

    objective = "Query: Find a chino in my usual fit and add it to the cart."
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    stop = {"action": "stop [Too many invalid action candidates attempted]",
            "reason": "Stopped due to 3 consecutive invalid action candidates"}  # fmt: skip
    write_agentoccam(
        dstdir,
        model=model,
        memory_mode=mode,
        task_id="Marcus_Okafor_C2",
        memory=[],
        trajectory=[
            # two actors ran (config.number > 1 or identities): their elements are logged as actor_{i}:*
            agentoccam_step(
                objective, search, status(True, 1), plan, stop,
                actors=[stop, {"reason": "Click the first result.", "action": "click [404]"}],
            ),
        ],
        elapsed=22.5,
    )  # fmt: skip

    objective = "Query: At threads.p2w.test, find women's running leggings in size M under $60."
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    steps = [
        agentoccam_step(objective, "http://threads.p2w.test/", status(n == 26, n), plan,
                        {"reason": "Look further down the listing.", "action": "scroll [down]"})
        for n in range(1, 27)
    ]  # fmt: skip
    # env.step past max_steps (25) ends the run; the logged action stays the agent's own
    write_agentoccam(
        dstdir, model=model, memory_mode=mode, task_id="Priya_Raman_A3", memory=[], trajectory=steps, elapsed=300.0
    )

    objective = "Query: Find a brunch table for my usual group at my usual brunch spot."
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    write_agentoccam(
        dstdir,
        model=model,
        memory_mode=mode,
        task_id="Tomas_Reyes_A2",
        memory=[],
        trajectory=[
            agentoccam_step(objective, "http://tablefor.p2w.test/", status(False, 1), plan,
                            {"reason": "Open the reservation search.", "action": "click [7]"}),
            agentoccam_step(objective, "http://tablefor.p2w.test/verify", status(True, 2), plan,
                            {"reason": "The page asks to solve a CAPTCHA.",
                             "action": "stop [The page shows a CAPTCHA check; I cannot continue]"}),
        ],
        elapsed=18.0,
    )  # fmt: skip


def agentoccam_pre_execution(root: Path) -> None:
    dstdir = root / "pre-execution_qwen"
    dstdir.mkdir(parents=True)
    model = "qwen3-next-80b-a3b-thinking"
    objective = (
        "Query: At threads.p2w.test, find women's running leggings in size M with a rating of 4.5 stars or higher "
        "priced under $60, and add the best match to the cart."
    )
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    target = "http://threads.p2w.test/search?q=running+leggings&size=M&min_rating=4.5&max_price=60"
    write_agentoccam(
        dstdir,
        model=model,
        memory_mode="pre-execution",
        task_id="Priya_Raman_A1",
        # the runner keeps only the last sentence of a qwen3-next-80b-a3b-thinking answer
        memory=[
            {"query": "user's leggings size", "retrieved_indices": [0], "answer": "The user wears size M leggings."},
            {"query": "user's budget for leggings", "retrieved_indices": [], "answer": ""},
        ],
        trajectory=[
            agentoccam_step(objective, "http://threads.p2w.test/", status(False, 1), plan,
                            {"reason": "Apply the filters.", "action": f"goto [{target}]"}),
            agentoccam_step(objective, target, status(True, 2), plan,
                            {"reason": "The Stride leggings match.",
                             "action": "stop [Stride Women's High-Rise Running Leggings, size M, 4.7 stars, $54]"}),
        ],
        elapsed=33.3,
    )  # fmt: skip


def agentoccam_no_history(root: Path) -> None:
    dstdir = root / "no-history_gpt41"
    dstdir.mkdir(parents=True)
    objective = "Query: Find a gluten-free, organic penne at basket.p2w.test and add two boxes to the cart."
    write_agentoccam(
        dstdir,
        model="gpt-4.1",
        memory_mode=None,
        task_id="Lena_Fischer_A3",
        memory=[],
        trajectory=[
            agentoccam_step(objective, "http://basket.p2w.test/", status(True, 1), f"[0] {objective}",
                            {"reason": "Nothing matches.", "action": "stop [N/A]"}),
        ],
        elapsed=12.0,
    )  # fmt: skip
