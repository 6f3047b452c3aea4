"""What a match tells a seat's connection and a spectator, as typed values.

The match runner, the ladder and the feed put these in each connection's outbox; each
transport encodes them at its edge: gRPC as protobuf (``bullring.contract.codec``), HTTP as
the proto3 JSON of the same message. One message is shared by every outbox it goes to (a
public event reaches every seat and spectator), so its protobuf encoding, once made, is kept
on it (``encoded``) and made once whatever the number of readers.

Each class is one body of ``PlayResponse`` in ``proto/bullring/v2/referee.proto``
(``Event`` and ``Ended`` are also the bodies of ``WatchResponse``); reasons are the proto's
enum numbers, the game's observation and events the engine's own values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(slots=True, eq=False)
class Message:
    """The base of every message: where its protobuf encoding is kept once made."""

    encoded: bytes | None = field(default=None, init=False, repr=False)
    """The message as a serialized PlayResponse, once a codec has made it."""
    watched: bytes | None = field(default=None, init=False, repr=False)
    """The message as a serialized WatchResponse (events and the end only), once made."""

    def size_bytes(self) -> int:
        """The memory it holds, roughly: its encodings, and as much again for its values
        (for caches bounded in bytes)."""
        return 2 * (len(self.encoded or b"") + len(self.watched or b""))


@dataclass(slots=True, eq=False)
class Started(Message):
    """``MatchStarted``: the match a seat plays, its settings and the seat's names."""

    match_id: str
    game: str
    settings: dict[str, Any]
    seat: int
    seat_names: tuple[str, ...]
    rated: bool


@dataclass(slots=True, eq=False)
class Request(Message):
    """``DecisionRequest``: the seat's observation with its pending decision, under the id
    its answer names, and the time the seat has left for it."""

    decision_id: str
    observation: Any
    time_left_ms: int


@dataclass(slots=True, eq=False)
class Accepted(Message):
    """``AnswerAccepted``: the answer to ``decision_id`` counts."""

    decision_id: str


@dataclass(slots=True, eq=False)
class Rejected(Message):
    """``AnswerRejected``: why the answer to ``decision_id`` does not count (a
    ``RejectReason`` number) and a precise message."""

    decision_id: str
    reason: int
    message: str


@dataclass(slots=True, eq=False)
class Event(Message):
    """``PublicEvent``: one public event of the engine (a game's event NamedTuple)."""

    event: Any


@dataclass(slots=True, eq=False)
class Ended(Message):
    """``MatchEnded``: totals and ranks by seat, and how the match ended (``normal`` or
    ``aborted``, as replays name it)."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    termination: str


@dataclass(slots=True, eq=False)
class Queued(Message):
    """``LadderQueued``: a registered bot waits in a ladder's queue (``notice`` says why it
    may wait long)."""

    game: str
    bot: str
    notice: str = ""


@dataclass(slots=True, eq=False)
class Closed(Message):
    """``Closed``: the server ends the connection on purpose (a ``CloseReason`` number) and
    says why; the connection's last message."""

    reason: int
    message: str


Verdict: TypeAlias = Accepted | Rejected
"""What the runner answers an answer with."""

Outgoing: TypeAlias = Started | Request | Accepted | Rejected | Event | Ended | Queued | Closed
"""Every message a seat's connection is sent."""

Watched: TypeAlias = Event | Ended
"""Every message a spectator is sent."""

__all__ = ["Accepted", "Closed", "Ended", "Event", "Message", "Outgoing", "Queued", "Rejected",
           "Request", "Started", "Verdict", "Watched"]
