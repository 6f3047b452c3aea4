"""The log's one-line rule in-process: ``OneLineFormatter`` escapes every record's message and
indents a traceback, so a line at the left margin is always the first of a record (the
server's log on a real server: ``tests/e2e/test_public_hygiene.py``)."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

from bullring import commandline as cli


def _logged(emit: Callable[[logging.Logger], None]) -> str:
    """What ``emit(logger)`` writes through a ``OneLineFormatter``."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(cli.OneLineFormatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("tests.log_lines")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    return out.getvalue()


def test_a_message_is_one_line_whatever_its_arguments_hold() -> None:
    """Newlines, carriage returns, ANSI escapes, C1 controls, NEL, line separators and
    bidirectional overrides in a message's arguments are written as escapes; printable
    text, accents and emoji stay as they are."""
    text = _logged(lambda log: log.info("bot %s from %s", "évé 🐂",
                                        "a\nb\r\x1b[31mc\x9bd\x85e\u2028f\u202eg\th"))
    assert text == ("INFO bot évé 🐂 from "
                    "a\\nb\\r\\x1b[31mc\\x9bd\\x85e\\u2028f\\u202eg\\th\n")
    assert cli.escaped("plain text") == "plain text"


def test_a_traceback_is_indented_and_its_message_escaped() -> None:
    """An exception whose message holds a newline and an escape: its traceback follows the
    record, every line indented by two spaces, the newline a line of the traceback, the
    escape escaped; no line but the first starts at the left margin."""
    def fail(log: logging.Logger) -> None:
        try:
            raise ValueError("bad\nINFO forged record\x1b[2K")
        except ValueError:
            log.exception("handler failed")

    lines = _logged(fail).splitlines()
    assert lines[0] == "ERROR handler failed"
    assert lines[1] == "  Traceback (most recent call last):"
    assert all(line.startswith("  ") for line in lines[1:]), lines
    assert lines[-2:] == ["  ValueError: bad", "  INFO forged record\\x1b[2K"]
