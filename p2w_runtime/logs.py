"""structlog set up once per process: JSON lines to a file, readable lines on the console, both redacted."""

from __future__ import annotations

import logging
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import structlog
from platformdirs import user_log_dir
from structlog.typing import Processor

from p2w_runtime.errors import UserError
from p2w_runtime.redaction import redact_log_record
from p2w_runtime.terminal import safe

_configured = False


class LogFileError(UserError):
    """The log file cannot be created or appended to (a read-only folder, a path under a regular file...)."""

    exit_code = 2


def default_log_file() -> Path:
    return Path(os.environ.get("P2W_LOG_FILE") or Path(user_log_dir("p2w-rt")) / "p2w-rt.jsonl")


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
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    file_handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact_log_record,
                structlog.processors.JSONRenderer(),
            ],
            foreign_pre_chain=shared,
        )
    )
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG)
    console.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                redact_log_record,
                _terminal_safe,
                structlog.dev.ConsoleRenderer(colors=False),
            ],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [file_handler, console]
    root.setLevel(logging.INFO if verbose < 2 else logging.DEBUG)
    for noisy in ("httpx", "httpcore", "openai", "aiosqlite", "sentence_transformers", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    _configured = True
    return log_file


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
