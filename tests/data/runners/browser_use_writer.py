"""Browser-Use's result folders as ``agent_runner.py`` (``main`` / ``run_task_file``) and
``Agent._add_to_trajectory_log`` write them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BROWSER_USE_TASKS = "/home/p2w/Persona2Web/browser-use/task"


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
        self,
        task_name: str,
        steps: list[dict[str, Any]],
        *,
        pre: list[dict[str, Any]] | None = None,
        success: bool | None,
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
