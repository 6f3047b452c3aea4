"""The contract's rule for a bot's comment on its answer (``Answer.comment``): what the
server accepts, and what the SDK checks before it sends one."""

from __future__ import annotations

import unicodedata

MAX_COMMENT_CHARS = 200
"""The longest comment an answer may carry, in characters (Unicode code points)."""


def comment_problem(comment: str) -> str | None:
    """What is wrong with an answer's ``comment`` (too long, or holding a control
    character), or None if it can be stored and shown."""
    if len(comment) > MAX_COMMENT_CHARS:
        return (f"the comment has {len(comment)} characters; at most {MAX_COMMENT_CHARS} "
                f"are allowed")
    for index, char in enumerate(comment):
        if unicodedata.category(char) == "Cc":
            return (f"the comment holds the control character U+{ord(char):04X} at "
                    f"position {index}; comments are one line of printable text")
    return None
