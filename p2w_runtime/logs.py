"""structlog set up once per process: JSON lines to a file, readable lines on the console, both redacted.

Setting up costs no structlog import (with rich under it, about a tenth of a second of CPU): the handlers build their
structlog formatters at their first record, and structlog itself is configured the moment something imports it
(``_AfterImport``), before any of its loggers can be used. ``runs`` and ``show`` log nothing and load neither
(docs/design/startup.md).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from p2w_runtime.errors import UserError
from p2w_runtime.terminal import safe

if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from structlog.typing import Processor

_configured = False


class LogFileError(UserError):
    """The log file cannot be created or appended to (a read-only folder, a path under a regular file...)."""

    exit_code = 2


class _LazyLogger:
    """A structlog logger made at its first use: a module that logs costs a command that imports it but logs
    nothing no structlog import."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, method: str) -> Any:
        if self._logger is None:
            import structlog

            self._logger = structlog.get_logger(self._name)
        return getattr(self._logger, method)


def get_logger(name: str) -> Any:
    """``structlog.get_logger(name)``, imported when the logger is first used."""
    return _LazyLogger(name)


def default_log_file() -> Path:
    if os.environ.get("P2W_LOG_FILE"):
        return Path(os.environ["P2W_LOG_FILE"])
    from platformdirs import user_log_dir

    return Path(user_log_dir("p2w-rt")) / "p2w-rt.jsonl"


def _terminal_safe(_logger: object, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The console renderer prints the message as is (other values as ``repr``): spell out its control
    characters there, since messages may quote recorded text; the JSON file keeps it exact."""
    if isinstance(event.get("event"), str):
        event["event"] = safe(event["event"])
    return event


def configure_logging(*, verbose: int = 0, log_file: Path | None = None) -> Path:
    """Route structlog and stdlib logging to a JSON file (everything) and stderr (warnings, or more with -v)."""
    global _configured
    log_file = log_file or default_log_file()
    if _configured:
        return log_file
    file_handler = _open_log_file(log_file)
    file_handler.setFormatter(_FirstRecord(_file_formatter))
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG)
    console.setFormatter(_FirstRecord(_console_formatter))
    root = logging.getLogger()
    root.handlers[:] = [file_handler, console]
    root.setLevel(logging.INFO if verbose < 2 else logging.DEBUG)
    for noisy in ("httpx", "httpcore", "openai", "aiosqlite", "sentence_transformers", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if "structlog" in sys.modules:
        _configure_structlog()
    else:
        sys.meta_path.insert(0, _AfterImport("structlog", _configure_structlog))
    _configured = True
    return log_file


def _shared() -> list[Processor]:
    """What every record gets, structlog's and the standard library's alike."""
    import structlog

    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def _configure_structlog() -> None:
    import structlog

    structlog.configure(
        processors=[*_shared(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def _file_formatter() -> logging.Formatter:
    import structlog

    from p2w_runtime.redaction import redact_log_record

    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redact_log_record,
            structlog.processors.JSONRenderer(),
        ],
        foreign_pre_chain=_shared(),
    )


def _console_formatter() -> logging.Formatter:
    import structlog

    from p2w_runtime.redaction import redact_log_record

    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            redact_log_record,
            _terminal_safe,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        foreign_pre_chain=_shared(),
    )


class _FirstRecord(logging.Formatter):
    """A formatter built when its handler formats its first record, so that a command that logs nothing never
    imports structlog."""

    def __init__(self, build: Callable[[], logging.Formatter]) -> None:
        super().__init__()
        self._build = build
        self._built: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._built is None:
            self._built = self._build()
        return self._built.format(record)


class _AfterImport:
    """Calls ``then`` once module ``name`` has been imported (and removes itself): configuring structlog when its
    first user imports it comes before any of its loggers is used, since they bind their configuration lazily.
    A finder on ``sys.meta_path``, first in line for that one name."""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = cast("Loader", _Then(spec.loader, self.then))
        return spec


class _Then:
    """``loader``, calling ``then`` after the module it loads has run (``importlib.abc`` is not imported for its
    base classes: it costs more than the rest of this module)."""

    def __init__(self, loader: Loader, then: Callable[[], None]) -> None:
        self._loader = loader
        self._then = then

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._then()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def _open_log_file(log_file: Path) -> logging.FileHandler:
    """The file handler, or a ``LogFileError`` naming the file and how to choose another one."""
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        return logging.FileHandler(log_file, encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise LogFileError(
            f"cannot write the log file {log_file} ({reason}); choose another with --log-file or P2W_LOG_FILE"
        ) from None
