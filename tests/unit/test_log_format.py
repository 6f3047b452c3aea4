"""``bullring serve --log-format``: a JSON line holds what the text line holds, and the
fields a record was given besides."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from bullring.server.logs import JsonLines, formatter


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord("bullring.hub", logging.WARNING, __file__, 1,
                               "match %s %s: totals %s", ("m1", "normal", [3, 9]), None)
    for name, value in extra.items():
        setattr(record, name, value)
    return record


def test_a_json_line_is_the_text_lines_content_plus_extra_fields() -> None:
    """One line of JSON with the time (UTC, ms), level, logger and the message as the text
    line has it, then every field given with ``extra=`` (a value JSON cannot hold as its
    text), and the traceback as ``exception``."""
    try:
        raise ValueError("boom")
    except ValueError:
        record = _record(match="m1", seats=(1, 2), when=object)
        record.exc_info = sys.exc_info()
    line = JsonLines().format(record)
    assert "\n" not in line
    parsed = json.loads(line)
    text = formatter("text").format(_record())
    assert text.endswith(f" bullring.hub WARNING {parsed['message']}")
    assert parsed["message"] == "match m1 normal: totals [3, 9]"
    assert (parsed["level"], parsed["logger"]) == ("WARNING", "bullring.hub")
    assert parsed["time"].endswith("+00:00") and len(parsed["time"]) == 29
    assert parsed["match"] == "m1" and parsed["seats"] == [1, 2]
    assert parsed["when"] == str(object)
    assert "ValueError: boom" in parsed["exception"] and "Traceback" in parsed["exception"]
    assert not {"args", "msg", "levelno", "pathname", "exc_info"} & set(parsed)


def test_an_unknown_log_format_is_refused() -> None:
    """Only the formats ``--log-format`` offers exist."""
    with pytest.raises(ValueError, match="text, json"):
        formatter("xml")
