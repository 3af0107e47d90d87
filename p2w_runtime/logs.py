"""structlog set up once per process: JSON lines to a file, readable lines on the console, both redacted.

Setting up imports no structlog (nor rich's tracebacks, which it imports): the file handler writes
a standard-library record as a JSON line itself and builds structlog's formatter at the first record a structlog
logger made, the console handler builds its formatter at its first record, and structlog itself is configured the
moment something imports it (``_AfterImport``), before any of its loggers can be used. ``get_logger`` logs through
the standard library in structlog's call form, so a pass that writes its records to the file loads no structlog
(docs/design/startup.md).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable, MutableMapping, Sequence
from datetime import UTC, datetime
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


_FIELDS = "p2w_fields"
"""The attribute of a standard-library record holding the key-value pairs ``get_logger``'s caller gave."""


class Logger:
    """A standard-library logger called as a structlog one (``log.info(event, key=value)``): the pairs travel on the
    record and both handlers render them where structlog puts its own, so the lines read the same, and a module
    that logs costs no structlog import."""

    def __init__(self, name: str) -> None:
        self._logger = logging.getLogger(name)

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def _log(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if self._logger.isEnabledFor(level):
            self._logger.log(level, "%s", event, extra={_FIELDS: fields})


def get_logger(name: str) -> Logger:
    """A logger of the standard library named ``name``, taking structlog's call form."""
    return Logger(name)


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
    file_handler.setFormatter(_JsonLines())
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


def _record_fields(_logger: object, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor for a standard-library record: the pairs ``get_logger``'s caller gave."""
    event.update(getattr(event["_record"], _FIELDS, {}))
    return event


class _JsonLines(logging.Formatter):
    """The file's line of a record: what structlog's formatter writes (the caller's pairs, ``event``, ``level``,
    ``logger``, ``timestamp``, then ``exception``; redacted), made here for a standard-library record and by
    structlog's formatter, built at its first, for a record a structlog logger made."""

    def __init__(self) -> None:
        super().__init__()
        self._structlog: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if hasattr(record, "_logger"):  # structlog's ``wrap_for_formatter`` made it
            if self._structlog is None:
                self._structlog = _structlog_file_formatter()
            return self._structlog.format(record)
        from p2w_runtime.redaction import redact_log_record

        event: dict[str, Any] = {**getattr(record, _FIELDS, {}), "event": record.getMessage()}
        if record.stack_info:
            event["stack_info"] = record.stack_info
        event["level"] = record.levelname.lower()
        event["logger"] = record.name
        event["timestamp"] = datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z")
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        return json.dumps(redact_log_record(None, "", event), default=repr)


def _structlog_file_formatter() -> logging.Formatter:
    import structlog

    from p2w_runtime.redaction import redact_log_record

    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redact_log_record,
            structlog.processors.JSONRenderer(),
        ],
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
        foreign_pre_chain=[_record_fields, *_shared()],
    )


class _FirstRecord(logging.Formatter):
    """A formatter built when its handler formats its first record, so that a command whose records stay below the
    console's level never imports structlog for it."""

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
