"""WebArena task configurations (the ``eval`` block of ``config_files/*.json`` / ``test.raw.json``).

Validated up front, so a config that could never be evaluated (a ``url_match`` without a
reference URL, an unknown ``required_contents`` kind) is reported by file and task id
before any judging starts, not as a crash in the middle of a batch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from p2w_runtime.errors import UserError

SITE_PLACEHOLDERS = ("__SHOPPING_ADMIN__", "__SHOPPING__", "__REDDIT__", "__GITLAB__", "__WIKIPEDIA__", "__MAP__")
"""WebArena's site placeholders; ``__SHOPPING_ADMIN__`` first so ``__SHOPPING__`` cannot eat its prefix."""


class WebArenaConfigError(UserError):
    """A WebArena config file is missing or malformed; the message names the file and task."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class ReferenceAnswers(_Model):
    exact_match: str | None = None
    must_include: list[str] | None = None
    fuzzy_match: list[str] | Literal["N/A"] | None = None


class RequiredContents(_Model):
    model_config = ConfigDict(frozen=True, extra="forbid")

    exact_match: str | None = None
    must_include: list[str] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> RequiredContents:
        if (self.exact_match is None) == (self.must_include is None):
            raise ValueError("required_contents needs exactly one of exact_match, must_include")
        return self


class HtmlCheck(_Model):
    url: str
    locator: str
    required_contents: RequiredContents
    prep_actions: list[str] = Field(default_factory=list)


class EvalSpec(_Model):
    eval_types: list[Literal["string_match", "url_match", "program_html"]] = Field(min_length=1)
    reference_answers: ReferenceAnswers | None = None
    reference_url: str | None = None
    program_html: list[HtmlCheck] = Field(default_factory=list)
    string_note: str | None = None
    url_note: Literal["GOLD in PRED"] = "GOLD in PRED"

    @model_validator(mode="after")
    def _complete(self) -> EvalSpec:
        answers = self.reference_answers
        if "string_match" in self.eval_types and (
            answers is None or (answers.exact_match, answers.must_include, answers.fuzzy_match) == (None, None, None)
        ):
            raise ValueError("string_match needs reference_answers")
        if "url_match" in self.eval_types and not self.reference_url:
            raise ValueError("url_match needs reference_url")
        if "program_html" in self.eval_types and not self.program_html:
            raise ValueError("program_html needs at least one check")
        return self


class WebArenaTask(_Model):
    task_id: int | str
    intent: str
    eval: EvalSpec

    @property
    def key(self) -> str:
        return str(self.task_id)


def parse_task(data: Any, source: str) -> WebArenaTask:
    try:
        return WebArenaTask.model_validate(data)
    except ValidationError as exc:
        task = data.get("task_id", "?") if isinstance(data, dict) else "?"
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise WebArenaConfigError(f"{source}: task {task}: field {where}: {first['msg']}") from None


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WebArenaConfigError(f"{path}: WebArena config not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WebArenaConfigError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise WebArenaConfigError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


def load_tasks(path: str | Path) -> dict[str, WebArenaTask]:
    """Tasks by id from a list file (``test.raw.json``), a single config, or a directory of ``{id}.json``."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if path.is_dir() and not files:
        raise WebArenaConfigError(f"{path}: no *.json WebArena configs in this directory")
    tasks: dict[str, WebArenaTask] = {}
    for file in files:
        data = _read(file)
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items):
            source = f"{file}[{index}]" if isinstance(data, list) else str(file)
            task = parse_task(item, source)
            tasks[task.key] = task
    return tasks


def substitute_sites(text: str, site_urls: dict[str, str]) -> str:
    """Replace ``__GITLAB__``-style placeholders with the base URLs the run used."""
    for placeholder in SITE_PLACEHOLDERS:
        base = site_urls.get(placeholder.strip("_").lower())
        if base and placeholder in text:
            text = text.replace(placeholder, base.rstrip("/"))
    return text
