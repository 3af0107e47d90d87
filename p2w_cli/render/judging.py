"""Judgments for people and for programs: lines and tables with evidence, and the ``--json`` line shape.

Recorded text (task ids, evidence, errors) goes through ``p2w_cli.render.terminal``: never markup, no control
characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from p2w_cli.render.terminal import cell, clip, markup, safe
from p2w_rt.replay.judges import JudgeEstimate, JudgeOutcome
from p2w_rt.schemas import Judgment

METRIC_NAMES = ("p_web", "p_pref", "p_avg", "intent")
EVIDENCE_WIDTH = 200
"""Characters of a rubric point's evidence text shown under it."""


def _fmt(value: float) -> str:
    return f"{value:g}"


def format_judgment(j: Judgment, *, event_id: str | None = None) -> RenderableType:
    """One judgment: header with judge, status and figures; a row per rubric point with its evidence."""
    head = Text()
    head.append(safe(f"{j.judge_id} v{j.judge_version}"), style="bold")
    head.append(safe(f"  {j.task_id}  "))
    if j.status != "ok":
        head.append(safe(f"FAILED: {j.error}"), style="red")
        return head
    figures = "  ".join(f"{k}={j.metrics[k]:.3f}" for k in (*METRIC_NAMES, "score") if k in j.metrics)
    head.append(figures)
    if "success" in j.metrics:
        head.append(
            "  success" if j.metrics["success"] == 1.0 else "  no success",
            style="green" if j.metrics["success"] == 1.0 else "yellow",
        )
    if j.cost_usd:
        head.append(f"  ${j.cost_usd:.4f}", style="dim")
    if event_id:
        head.append(f"  [{event_id}]", style="dim")
    table = Table(show_header=True, header_style="bold", expand=False, pad_edge=False)
    table.add_column("point")
    table.add_column("score", justify="right")
    table.add_column("evidence")
    for key, top in j.max_points.items():
        got = j.points.get(key, 0.0)
        evidence = j.evidence.get(key)
        lines = Text()
        if evidence is not None:
            lines.append(safe(evidence.note))
            if evidence.text:
                lines.append(f"\n“{safe(clip(evidence.text, EVIDENCE_WIDTH))}”", style="italic")
            if evidence.event_ids:
                lines.append("\n" + safe(", ".join(evidence.event_ids)), style="dim")
        style = "green" if got == top else ("yellow" if got else "red")
        table.add_row(cell(key), Text(f"{_fmt(got)}/{_fmt(top)}", style=style), lines)
    return Group(head, table)


def judgment_json(j: Judgment, *, cached: bool = False, level: int | None = None) -> dict[str, Any]:
    """The ``--json`` object of one judged episode: the five figures normalized to 0..1, points and evidence."""
    success = j.metrics.get("success")
    return {
        "task_id": j.task_id,
        "judge": j.judge_id,
        "p_web": j.metrics.get("p_web"),
        "p_pref": j.metrics.get("p_pref"),
        "p_avg": j.metrics.get("p_avg"),
        "intent": j.metrics.get("intent"),
        "success": None if success is None else success == 1.0,
        "points": j.points,
        "evidence": {k: e.model_dump(mode="json") for k, e in j.evidence.items()},
        "episode": j.episode_stream,
        "level": level,
        "status": j.status,
        "error": j.error,
        "cached": cached,
        "judge_version": j.judge_version,
        "cost_usd": j.cost_usd,
    }


def _figures(j: Judgment) -> str:
    m = j.metrics
    success = "  success" if m.get("success") == 1.0 else ""
    if "p_web" in m:
        return "  ".join(f"{k}={m[k]:.3f}" for k in METRIC_NAMES) + success
    if "score" in m or not m:
        return f"score={m.get('score', 0):.3f}" + success
    return "  ".join(f"{k}={v:.3f}" for k, v in list(m.items())[:5])  # AgenticShop judges: their own figures


def judgment_line(outcome: JudgeOutcome) -> str:
    """One judged episode as a rich markup line (recorded text escaped)."""
    j = outcome.judgment
    tag = "cached " if outcome.cached else ""
    if j.status != "ok":
        return f"{tag}[red]failed[/]  {markup(j.task_id)}  {markup(j.judge_id)}: {markup(j.error or '')}"
    return f"{tag}{markup(j.task_id)}  {markup(j.judge_id)}  {_figures(j)}"


def estimate_json(e: JudgeEstimate, model: str) -> dict[str, Any]:
    return {
        "judge": e.judge_id,
        "episodes": e.episodes,
        "cached": e.cached,
        "llm_calls": e.calls,
        "prompt_tokens": e.prompt_tokens,
        "completion_tokens": e.completion_tokens,
        "cost_usd": e.cost_usd,
        "model": model,
        "unjudgeable": e.unjudgeable,
    }


def estimates_table(estimates: Sequence[JudgeEstimate], model: str) -> Table:
    table = Table(
        "judge",
        "episodes",
        "cached",
        "LLM calls",
        "prompt tokens",
        "completion tokens",
        "cost (USD)",
        title=markup(f"dry run: nothing called, nothing appended (model {model})"),
        title_justify="left",
    )
    for e in estimates:
        cost = "unknown price" if e.cost_usd is None else f"{e.cost_usd:.4f}"
        table.add_row(
            cell(e.judge_id),
            str(e.episodes),
            str(e.cached),
            str(e.calls),
            f"~{e.prompt_tokens}",
            f"~{e.completion_tokens}",
            cost,
        )
    return table
