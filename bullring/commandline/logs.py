"""One record, one line: what a client sent reaches a log escaped, never raw.

A bot's name, an address from ``X-Forwarded-For``, a path, a reason or a message from the
server can hold control characters: a newline starts a line that reads like one of the log's
own, an ANSI escape (``ESC [ ...``) rewrites what a terminal shows, ``U+2028`` or ``NEL``
break the line for the tools that read the log. ``escaped`` writes each such character as a
Python escape (``\\n``, ``\\x1b``, ``\\u2028``); ``OneLineFormatter`` applies it to every
record's message in one place, so no call site has to remember. A record's traceback keeps
its lines, each indented and with its control characters escaped, so every line that starts
at the left margin is the first line of a record.
"""

from __future__ import annotations

import logging
import unicodedata

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
"""Unicode categories shown escaped: control characters (C0, DEL, C1), format characters
(bidirectional overrides, zero-width marks) and the line and paragraph separators."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF \
        else f"\\U{code:08x}"


def is_unsafe(char: str) -> bool:
    """Whether ``char`` is shown escaped in a log (see ``UNSAFE_CATEGORIES``)."""
    return unicodedata.category(char) in UNSAFE_CATEGORIES


def has_control_characters(text: str) -> bool:
    """Whether ``text`` holds a control character or a line or paragraph separator: what one
    line of a name or an owner may not hold (format characters such as the zero-width joiner
    of an emoji may; a log shows them escaped)."""
    return not text.isprintable() and any(
        unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text)


def escaped(text: str, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character written as its escape (``ESC`` as ``\\x1b``, a
    newline as ``\\n`` unless ``keep_newlines``); printable text comes back as it is."""
    if text.isprintable():
        return text
    return "".join(_escape(c) if is_unsafe(c) and not (keep_newlines and c == "\n") else c
                   for c in text)


class OneLineFormatter(logging.Formatter):
    """A ``logging.Formatter`` whose every record is one line: the message escaped (see
    ``escaped``); a traceback or stack after it indented by two spaces, one line of the
    traceback per line of the log, its control characters escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The record's line, its message escaped."""
        record.message = escaped(record.message)
        return super().formatMessage(record)

    def format(self, record: logging.LogRecord) -> str:
        """The record's line, then its traceback (if any), indented."""
        line, newline, rest = super().format(record).partition("\n")
        if not newline:
            return line
        lines = escaped(rest, keep_newlines=True).split("\n")
        return line + "".join(f"\n  {part}" for part in lines)
