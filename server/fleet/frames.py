"""The frames the servers of a fleet send each other through the broker to relay seats.

A frame is one broker message: a header line of ASCII fields separated by spaces (its kind,
the match, the seat, the server that sends it, the bot, a number), then its body. Match ids,
server ids and bot names hold no space (``bullring.commandline.bot_name_problem``).

From the match's server to the bot's server: ``PLAY`` (messages for the seat's connection,
each a serialized PlayResponse, in order) and ``VERDICT`` (the verdict of an answer that
was asked for by its number). From the bot's server to the match's: ``ANSWER`` (a
serialized ``Answer``), ``ATTACH`` (the bot's connection is back: send the seat its start
and pending request again; the body says which connection) and ``DETACH`` (the bot's
connection ended, or the bot is not connected there; the body says why). ``PING`` asks a
server to answer ``PONG`` with the same number, after every frame before it: the match's
server asks so at a match's end, to know its link to each bot's server held to the end.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum

from bullring.server.errors import RelayFrameError

SUBJECT_PREFIX = "bullring.relay."
"""A server's subject is this and its instance id: every frame for it goes there."""
ALIVE = "bullring.alive"
"""The subject every server publishes its instance id on, every second: who is linked."""

_LENGTH = struct.Struct(">I")


class Kind(Enum):
    """What a frame carries."""

    PLAY = "P"
    VERDICT = "V"
    ANSWER = "A"
    ATTACH = "C"
    DETACH = "D"
    PING = "I"
    PONG = "O"


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame, read."""

    kind: Kind
    match_id: str
    seat: int
    sender: str
    """The instance id of the server that sent it."""
    bot: str = ""
    """The seat's bot (``PLAY``)."""
    number: int = 0
    """The answer's number (``ANSWER``, ``VERDICT``): 0 for an answer whose verdict goes to
    the seat's connection in order with what follows it, in a ``PLAY`` frame."""
    body: bytes = b""


def subject(instance: str) -> str:
    """The subject where server ``instance`` reads its frames."""
    return SUBJECT_PREFIX + instance


def head(kind: Kind, match_id: str, seat: int, sender: str, bot: str = "",
         number: int = 0) -> bytes:
    """A frame's header line (a seat's ``PLAY`` frames all share theirs)."""
    return f"{kind.value} {match_id} {seat} {sender} {bot or '-'} {number}\n".encode()


def encode(kind: Kind, match_id: str, seat: int, sender: str, body: bytes = b"",
           bot: str = "", number: int = 0) -> bytes:
    """A frame as the broker carries it."""
    return head(kind, match_id, seat, sender, bot, number) + body


def decode(data: bytes) -> Frame:
    """The frame ``data`` holds; RelayFrameError (a ValueError) if it is not one."""
    line, sep, body = data.partition(b"\n")
    fields = line.decode("ascii", "replace").split(" ")
    if not sep or len(fields) != 6:
        raise RelayFrameError(f"not a relay frame: {data[:40]!r}")
    kind, match_id, seat, sender, bot, number = fields
    try:
        return Frame(Kind(kind), match_id, int(seat), sender, "" if bot == "-" else bot,
                     int(number), body)
    except ValueError:
        raise RelayFrameError(f"not a relay frame: {data[:40]!r}") from None


def pack(messages: list[bytes]) -> bytes:
    """A ``PLAY`` frame's body: each message after its length."""
    return b"".join([_LENGTH.pack(len(m)) + m for m in messages])


def unpack(body: bytes) -> list[bytes]:
    """The messages a ``PLAY`` frame's body holds; RelayFrameError if it is cut short."""
    messages = []
    at = 0
    while at < len(body):
        if at + _LENGTH.size > len(body):
            raise RelayFrameError("a relayed message's length is cut short")
        (size,) = _LENGTH.unpack_from(body, at)
        at += _LENGTH.size
        if at + size > len(body):
            raise RelayFrameError("a relayed message is cut short")
        messages.append(body[at:at + size])
        at += size
    return messages
