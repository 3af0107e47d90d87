"""WebArena task configurations (the ``eval`` block of ``config_files/*.json`` / ``test.raw.json``).

Loaded in every shape WebArena writes (``"reference_answers": []`` or ``null`` and
``"program_html": null`` for evaluators the task does not use, extra annotation fields) and
validated only for the evaluators the task lists, as WebArena reads only those. A config
WebArena's evaluators would crash on (a ``url_match`` without a reference URL, a locator of
unknown kind) is reported by file, task and field before any judging starts.

Site placeholders (``__GITLAB__``...) are replaced in every string of the config, as WebArena's
``scripts/generate_test_data.py`` does on the raw file: URLs, locators, required contents and
reference answers alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from p2w_rt.replay.webarena._helpers import LOCATOR_HELPERS, URL_HELPERS, check_call
from p2w_runtime.errors import UserError

SITE_PLACEHOLDERS = ("__SHOPPING_ADMIN__", "__SHOPPING__", "__REDDIT__", "__GITLAB__", "__WIKIPEDIA__", "__MAP__")
"""WebArena's site placeholders (no one is a substring of another, so the order does not matter)."""


class WebArenaConfigError(UserError):
    """A WebArena config file is missing or malformed; the message names the file and task."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)


class RequiredContents(_Model):
    """What a ``program_html`` locator must select. With both keys WebArena checks ``exact_match`` only."""

    exact_match: str | None = None
    must_include: list[str] | None = None

    @model_validator(mode="after")
    def _a_kind(self) -> RequiredContents:
        if self.exact_match is None and self.must_include is None:
            raise ValueError("required_contents needs exact_match or must_include")
        return self


class HtmlCheck(_Model):
    url: str
    locator: str
    required_contents: RequiredContents
    prep_actions: list[str] = Field(default_factory=list)

    @field_validator("url")
    @classmethod
    def _known_url(cls, url: str) -> str:
        if url.startswith("func"):
            check_call(url.split("func:")[-1].replace("__last_url__", ""), URL_HELPERS)
        return url

    @field_validator("locator")
    @classmethod
    def _known_locator(cls, locator: str) -> str:
        if locator.startswith("func:"):
            check_call(locator.removeprefix("func:"), LOCATOR_HELPERS)
        elif locator.strip() and not locator.startswith(("document.", "[...document.")):
            raise ValueError(f"unknown locator {locator[:60]!r} (WebArena knows '', document., [...document., func:)")
        return locator


def _answers(value: Any) -> dict[str, Any]:
    """WebArena iterates ``reference_answers.items()`` in file order; only its three kinds score, others are ignored."""
    if not isinstance(value, dict):
        raise ValueError("string_match needs reference_answers (an object)")
    for kind, refs in value.items():
        if kind == "exact_match" and not isinstance(refs, str):
            raise ValueError("reference_answers.exact_match must be a string")
        if kind == "must_include" and not (isinstance(refs, list) and all(isinstance(r, str) for r in refs)):
            raise ValueError("reference_answers.must_include must be a list of strings")
        if (
            kind == "fuzzy_match"
            and refs != "N/A"
            and not (isinstance(refs, list) and all(isinstance(r, str) for r in refs))
        ):
            raise ValueError('reference_answers.fuzzy_match must be "N/A" or a list of strings')
    return value


def _evaluated(info: ValidationInfo, eval_type: str) -> bool:
    return eval_type in (info.data.get("eval_types") or [])


class EvalSpec(_Model):
    """The ``eval`` block; a part no listed evaluator reads is kept as ``None``, whatever its shape."""

    eval_types: list[Literal["string_match", "url_match", "program_html"]] = Field(min_length=1)
    reference_answers: dict[str, Any] | None = None
    reference_url: str | None = None
    program_html: list[HtmlCheck] | None = None
    string_note: str | None = None
    url_note: str = "GOLD in PRED"

    @field_validator("url_note")
    @classmethod
    def _rule(cls, value: str, info: ValidationInfo) -> str:
        if _evaluated(info, "url_match") and value != "GOLD in PRED":
            raise ValueError(f"unknown url_note {value!r} (WebArena knows 'GOLD in PRED')")
        return value

    @field_validator("reference_answers", mode="before")
    @classmethod
    def _answers(cls, value: Any, info: ValidationInfo) -> Any:
        return _answers(value) if _evaluated(info, "string_match") else None

    @field_validator("reference_url", mode="before")
    @classmethod
    def _url(cls, value: Any, info: ValidationInfo) -> Any:
        if not _evaluated(info, "url_match"):
            return None
        if not (isinstance(value, str) and value):
            raise ValueError("url_match needs reference_url")
        return value

    @field_validator("program_html", mode="before")
    @classmethod
    def _checks(cls, value: Any, info: ValidationInfo) -> Any:
        if not _evaluated(info, "program_html"):
            return None
        if not isinstance(value, list) or not value:
            raise ValueError("program_html needs at least one check")
        return value

    @model_validator(mode="after")
    def _reason(self) -> EvalSpec:
        if self.answers.get("fuzzy_match") == "N/A" and self.string_note is None:
            raise ValueError('fuzzy_match "N/A" needs string_note (the reason the task is unachievable)')
        return self

    @property
    def answers(self) -> dict[str, Any]:
        """The string_match references in file order (empty unless ``string_match`` is evaluated)."""
        return self.reference_answers or {}

    @property
    def checks(self) -> list[HtmlCheck]:
        """The program_html checks (empty unless ``program_html`` is evaluated)."""
        return self.program_html or []


class WebArenaTask(_Model):
    task_id: int | str
    intent: str
    eval: EvalSpec

    @property
    def key(self) -> str:
        return str(self.task_id)


def substitute_sites(value: Any, site_urls: dict[str, str]) -> Any:
    """Replace ``__GITLAB__``-style placeholders with the configured base URLs in every string of ``value``."""
    if isinstance(value, str):
        for placeholder in SITE_PLACEHOLDERS:
            base = site_urls.get(placeholder.strip("_").lower())
            if base and placeholder in value:
                value = value.replace(placeholder, base.rstrip("/"))
        return value
    if isinstance(value, list):
        return [substitute_sites(item, site_urls) for item in value]
    if isinstance(value, dict):
        return {key: substitute_sites(item, site_urls) for key, item in value.items()}
    return value


def parse_task(data: Any, source: str, site_urls: dict[str, str] | None = None) -> WebArenaTask:
    try:
        return WebArenaTask.model_validate(substitute_sites(data, site_urls or {}))
    except ValidationError as exc:
        task = data.get("task_id", "?") if isinstance(data, dict) else "?"
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise WebArenaConfigError(f"{source}: task {task}: field {where}: {message}") from None


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WebArenaConfigError(f"{path}: WebArena config not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WebArenaConfigError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise WebArenaConfigError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


def load_tasks(path: str | Path, site_urls: dict[str, str] | None = None) -> dict[str, WebArenaTask]:
    """Tasks by id from a list file (``test.raw.json``), a single config, or a directory of ``{id}.json``,
    with the site placeholders replaced by ``site_urls`` (``{"gitlab": "http://..."}``)."""
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
            task = parse_task(item, source, site_urls)
            tasks[task.key] = task
    return tasks
