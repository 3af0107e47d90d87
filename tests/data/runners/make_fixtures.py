"""Write the runner output folders under tests/data/runners/ exactly as the Persona2Web runners write them.

Each writer below follows one writer of ``serin-kimm/Persona2Web`` (key names and order, nesting,
types, file names, sibling files, ``json.dump`` arguments); the contents are made up for the sample
personas of ``p2w_runtime/sample``. ``tests/test_importers.py`` checks that the committed files are
what this script writes, so edit the script and rerun it rather than the files:

    python tests/data/runners/make_fixtures.py
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
AGENTOCCAM_ROOT = "/home/p2w/Persona2Web/AgentOccam"
BROWSER_USE_TASKS = "/home/p2w/Persona2Web/browser-use/task"
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


# -- Browser-Use: agent_runner.py main / run_task_file + Agent._add_to_trajectory_log -------------


def browser_use_name(scheme: str, model: str, task_name: str) -> str:
    """``{scheme_short}_{model_name}_{task_name}.json``: only ``/``, ``-`` and ``.`` removed from the model."""
    scheme_short = {"on-demand": "on", "pre-execution": "pre", "no-history": "no"}[scheme]
    return f"{scheme_short}_{model.replace('/', '').replace('-', '').replace('.', '')}_{task_name}.json"


def memory_step(n: int, url: str, observation: str, reason: str, query: str, indices: list[int], answer: str) -> dict:
    return {"step": n, "url": url, "step_type": "memory", "current_observation": observation, "memory_reason": reason,
            "memory_query": query, "retrieved_memory_indices": indices, "memory_answer": answer}  # fmt: skip


def navigation_step(n: int, url: str, reason: str | None, actions: list[dict[str, Any]] | None) -> dict:
    """A step without model output (an LLM or parsing failure) has neither ``reason`` nor ``actions``."""
    entry: dict[str, Any] = {"step": n, "url": url, "step_type": "navigation"}
    if actions is not None:
        entry["reason"] = reason or ""
        entry["actions"] = actions
    return entry


def dump(path: Path, data: Any) -> None:
    """``json.dump(..., ensure_ascii=False, indent=2)``, as every Browser-Use writer does."""
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


class BrowserUseRun:
    """One ``python agent_runner.py --config {config}.yml`` invocation writing into ``result/{config}/``."""

    def __init__(self, out_dir: Path, *, experiment_id: str, provider: str, model: str, scheme: str) -> None:
        self.out_dir, self.experiment_id = out_dir, experiment_id
        self.provider, self.model, self.scheme = provider, model, scheme
        self.results: list[dict[str, Any]] = []
        out_dir.mkdir(parents=True, exist_ok=True)

    def task_file(self, task_name: str) -> str:
        return f"{BROWSER_USE_TASKS}/personalization_{self.experiment_id}/{task_name}.json"

    def finished(
        self, task_name: str, steps: list[dict[str, Any]], *, pre: list[dict[str, Any]] | None = None, success: bool
    ) -> None:
        path = self.out_dir / browser_use_name(self.scheme, self.model, task_name)
        dump(path, steps)  # Agent.save_trajectory
        if pre:  # pre-execution: memory steps prepended, navigation steps renumbered, file rewritten
            for nav in steps:
                nav["step"] += len(pre)
            dump(path, pre + steps)
        final = next((a.get("text") for s in steps for a in s.get("actions", []) if a["action"] == "done"), None)
        self.results.append({
            "task_file": self.task_file(task_name), "experiment_id": self.experiment_id, "provider": self.provider,
            "model": self.model, "scheme": self.scheme, "memory_bank_path": "memory_bank", "success": success,
            "num_steps": len(steps), "final_result": final,
            "usage": {"total_prompt_tokens": 5210 * len(steps), "total_prompt_cost": 0.0,
                      "total_prompt_cached_tokens": 0, "total_prompt_cached_cost": 0.0,
                      "total_completion_tokens": 180 * len(steps), "total_completion_cost": 0.0,
                      "total_tokens": 5390 * len(steps), "total_cost": 0.0, "entry_count": len(steps), "by_model": {}},
        })  # fmt: skip

    def crashed(self, task_name: str, error: str) -> None:
        record = {"task_file": self.task_file(task_name), "experiment_id": self.experiment_id, "error": error}
        self.results.append(record)
        dump(self.out_dir / f"{task_name}.error.json", record)

    def close(self) -> None:
        dump(self.out_dir / "_summary.json", self.results)


def browser_use_on_demand(result: Path) -> None:
    out = result / "on-demand_gpt41_1"
    options = {"experiment_id": "1", "provider": "openai", "model": "gpt-4.1", "scheme": "on-demand"}
    first = BrowserUseRun(out, **options)
    target = "http://threads.p2w.test/search?q=trail+running+shoes&category=running-shoes&size=10.5&max_price=130"
    answer = "Added Ridgeline Men's Trail Running Shoes (size 10.5, $119, under $130) to the cart on threads.p2w.test."
    first.finished(
        "Tomas_Reyes_B1",
        [
            navigation_step(1, "about:blank", "Find the store the user buys running shoes at.",
                            [{"action": "search", "query": "threads trail running shoes"}]),
            memory_step(2, "http://search.p2w.test/search?q=threads+trail+running+shoes",
                        "Search results for trail running shoes; threads.p2w.test is the first result.",
                        "The task needs the user's shoe size and budget.", "user's running shoe size and budget",
                        [29, 126, 291], "Size 10.5 (US 10½); under $130; the user lives in Denver, CO 80202."),
            navigation_step(3, "http://search.p2w.test/search?q=threads+trail+running+shoes",
                            "Open the filtered listing.", [{"action": "navigate", "url": target}]),
            navigation_step(4, target, "Add the Ridgeline pair to the cart; it ships to Denver, CO 80202.",
                            [{"action": "click", "element_index": 42}, {"action": "done", "text": answer}]),
        ],
        success=True,
    )  # fmt: skip
    first.finished(
        "Lena_Fischer_B1",
        [
            navigation_step(1, "about:blank", "Look for the cafe.", [{"action": "navigate", "url": "http://tablefor.p2w.test/"}]),
            navigation_step(2, "http://tablefor.p2w.test/", "Scroll to the list.", [{"action": "scroll"}]),
            navigation_step(3, "http://tablefor.p2w.test/", None, None),
        ],
        success=False,
    )  # fmt: skip
    first.crashed("Marcus_Okafor_A1", "TimeoutError: Navigation timeout of 30000 ms exceeded")
    first.crashed("Priya_Raman_C1", "RuntimeError: Browser closed unexpectedly")
    first.close()
    # Run again: tasks with a trajectory file are skipped, error files stay, _summary.json is overwritten.
    second = BrowserUseRun(out, **options)
    second.crashed("Marcus_Okafor_A1", "ModelProviderError: Error code: 429 - Rate limit reached for gpt-4.1")
    second.finished(
        "Priya_Raman_C1",
        [navigation_step(1, "about:blank", "Book it.", [{"action": "done", "text": "Booked the 6:30 pm class."}])],
        success=True,
    )
    second.close()


def browser_use_pre_execution(result: Path) -> None:
    run = BrowserUseRun(
        result / "pre-execution_llama_2",
        experiment_id="2",
        provider="openai",
        model="llama3.1:70b",
        scheme="pre-execution",
    )
    target = "http://threads.p2w.test/search?q=trail+running+shoes&category=running-shoes&size=10.5&max_price=130"
    pre = [
        {"step": 1, "url": None, "step_type": "memory", "memory_query": "user's shoe size",
         "retrieved_memory_indices": [29, 126], "memory_answer": "US 10½."},
        {"step": 2, "url": None, "step_type": "memory", "memory_query": "user's running shoes budget",
         "retrieved_memory_indices": [126, 291], "memory_answer": "Around $130 at most."},
    ]  # fmt: skip
    run.finished(
        "Tomas_Reyes_B2",
        [
            navigation_step(1, "about:blank", "Open the filtered listing.", [{"action": "navigate", "url": target}]),
            navigation_step(2, target, "The Ridgeline fits.",
                            [{"action": "done", "text": "Ridgeline Men's Trail Running Shoes, size 10.5, $119."}]),
        ],
        pre=pre,
        success=True,
    )  # fmt: skip
    run.close()


def browser_use_no_history(result: Path) -> None:
    run = BrowserUseRun(
        result / "no-history_gpt_4o_3", experiment_id="3", provider="openai", model="gpt_4o", scheme="no-history"
    )
    run.finished(
        "Lena_Fischer_C3",
        [navigation_step(1, "about:blank", "Nothing to do.", [{"action": "done", "text": "Not possible."}])],
        success=False,
    )
    run.close()


def browser_use_default_model(result: Path) -> None:
    """``ChatBrowserUse()`` with an empty model: the file names read ``on__{task}.json``."""
    run = BrowserUseRun(
        result / "on-demand_default_1", experiment_id="1", provider="browser-use", model="", scheme="on-demand"
    )
    run.finished(
        "Priya_Raman_B1",
        [navigation_step(1, "about:blank", "Stop.", [{"action": "done", "text": "Booked a table for four."}])],
        success=True,
    )
    run.close()


def main(root: Path = HERE) -> None:
    """(Re)write both runners' folders under ``root``."""
    for name in ("agentoccam", "browser_use"):
        shutil.rmtree(root / name, ignore_errors=True)
    logs = root / "agentoccam" / "logs"
    agentoccam_on_demand(logs)
    agentoccam_pre_execution(logs)
    agentoccam_no_history(logs)
    result = root / "browser_use" / "result"
    browser_use_on_demand(result)
    browser_use_pre_execution(result)
    browser_use_no_history(result)
    browser_use_default_model(result)


if __name__ == "__main__":
    main()
