"""How ``bullring serve`` writes its log: a text line per event, or a JSON object per line
(``--log-format json``) for log collectors, with the same content."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from bullring.commandline.logs import OneLineFormatter
from bullring.errors import ConfigurationError

TEXT_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"
"""A text line: ``time logger LEVEL message`` (a traceback follows on its own lines)."""

LOG_FORMATS = ("text", "json")
"""The values of ``bullring serve --log-format``."""

_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "taskName"}
"""The attributes every log record has; any other one came from ``extra=`` and is logged as
a field of its own."""


class JsonLines(logging.Formatter):
    """One JSON object per record, on one line: ``time`` (ISO 8601, UTC, milliseconds),
    ``level``, ``logger``, ``message``, then the record's extra fields, and ``exception``
    (the traceback's text) or ``stack`` when the record has one. A value JSON cannot hold is
    written as its ``str``."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _RECORD_FIELDS and name not in line:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of ``log_format`` (one of ``LOG_FORMATS``)."""
    if log_format == "json":
        return JsonLines()
    if log_format == "text":
        return OneLineFormatter(TEXT_FORMAT)  # every record one line, clients' text escaped
    raise ConfigurationError(f"log format is one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
