"""What a live match sends out: the messages for each seat's connection, and the public
events for its spectators.

Each seat's connection gets its messages through its outbox (``server/outbox.py``); a
spectator gets every public event from the start of the match, then each as it happens.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client_sdk.bot import Bot
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from server import outgoing
from server.answers import MAX_REJECTS_LOGGED
from server.outbox import Outbox, replaced


@dataclass(eq=False)
class SeatLink:
    """The server's side of one seat: its live connection (if any) and its strike count."""

    seat: int
    name: str
    house: Bot | None = None
    outbox: Outbox | None = None
    """Messages for the connected stream; None while nobody is connected."""
    disconnected: bool = True
    strikes: int = 0
    joined_once: bool = False
    connection: int = 0
    """Counts connections, so a stale stream cannot detach a newer one."""
    lasting: bool = False
    """The outbox belongs to a ladder stream that outlives this match: never closed here."""
    rejects_step: int = -1
    """The decision point (engine step) ``rejects_logged`` counts for."""
    rejects_logged: int = 0
    """Answers of this seat rejected at that point."""

    def count_rejection(self, step: int) -> bool:
        """Count an answer of this seat rejected at decision point ``step``; True if it is
        one of the first ``MAX_REJECTS_LOGGED`` there, which the match log keeps."""
        if self.rejects_step != step:
            self.rejects_step, self.rejects_logged = step, 0
        self.rejects_logged += 1
        return self.rejects_logged <= MAX_REJECTS_LOGGED


class MatchFeed:
    """The messages one match sends to its seats' connections and to its spectators."""

    def __init__(self, seats: list[SeatLink]) -> None:
        self.seats = seats
        self.public: list[bytes] = []
        """Every public event so far, each a serialized PublicEvent."""
        self.spectators: list[asyncio.Queue[pb.WatchResponse | None]] = []
        self.ended: pb.MatchEnded | None = None
        """The result, once the match has ended."""

    def connect(self, link: SeatLink, outbox: Outbox | None, via: str,
                on_sent: Callable[[str], None], started: pb.PlayResponse) -> Outbox:
        """Connect a new stream to ``link``'s seat and return its outbox (a new one, or
        ``outbox``: a ladder stream's, never closed here), its first message ``started``
        (then the result, if the match has ended). An older stream of the seat is ended
        with Closed(REPLACED), naming the new one (``via``: its transport and peer)."""
        if link.outbox is not None and link.outbox is not outbox:
            link.outbox.end(replaced(via))
        link.lasting = outbox is not None
        link.outbox = Outbox() if outbox is None else outbox
        link.outbox.on_sent = on_sent
        link.connection += 1
        link.disconnected = False
        link.strikes = 0
        link.joined_once = True
        link.outbox.put_message(started)
        if self.ended is not None:
            link.outbox.put_message(pb.PlayResponse(match_ended=self.ended))
            if not link.lasting:
                link.outbox.put_nowait(None)
        return link.outbox

    @staticmethod
    def send(link: SeatLink, item: bytes, decision_id: str | None = None) -> bool:
        """Queue ``item`` (the request of ``decision_id``, if given) for ``link``'s
        connection; False if that left too much unread and ended the connection."""
        outbox = link.outbox
        assert outbox is not None
        outbox.put_nowait(item, decision_id)
        return not outbox.stalled

    def publish(self, engine_event: Any) -> list[SeatLink]:
        """Send an engine event's public form to every connected seat and spectator; return
        the seats whose connection that ended for leaving too much unread."""
        public = outgoing.public_event(engine_event)
        self.public.append(public)
        message = outgoing.play_event(public)
        stalled = [link for link in self.seats
                   if link.outbox is not None and not self.send(link, message)]
        if self.spectators:
            watched = pb.WatchResponse(event=pb.PublicEvent.FromString(public))
            for queue in self.spectators:
                queue.put_nowait(watched)
        return stalled

    def watch(self) -> asyncio.Queue[pb.WatchResponse | None]:
        """A queue of every public message of this match, from its start."""
        queue: asyncio.Queue[pb.WatchResponse | None] = asyncio.Queue()
        for public in self.public:
            queue.put_nowait(pb.WatchResponse(event=pb.PublicEvent.FromString(public)))
        if self.ended is not None:
            queue.put_nowait(pb.WatchResponse(match_ended=self.ended))
            queue.put_nowait(None)
        else:
            self.spectators.append(queue)
        return queue

    def unwatch(self, queue: asyncio.Queue[pb.WatchResponse | None]) -> None:
        """Stop feeding a spectator's queue (its connection closed)."""
        with contextlib.suppress(ValueError):
            self.spectators.remove(queue)

    def end(self, ended: pb.MatchEnded, on_sent: Callable[..., None]) -> None:
        """Tell every seat and spectator the result; ``on_sent`` is the runner's request
        hook, unhooked from the outboxes that outlive the match."""
        self.ended = ended
        for link in self.seats:
            if link.outbox is not None:
                link.outbox.put_message(pb.PlayResponse(match_ended=ended))
                if not link.lasting:
                    link.outbox.put_nowait(None)
                elif getattr(link.outbox.on_sent, "func", None) == on_sent:
                    # A ladder stream's outbox outlives the match: left pointing here, it
                    # would make runner -> seat -> outbox -> runner a cycle (freed only by a
                    # full collection) once its bot leaves before its next match.
                    link.outbox.on_sent = None
        for queue in self.spectators:
            queue.put_nowait(pb.WatchResponse(match_ended=ended))
            queue.put_nowait(None)
