"""What a live match sends out: the messages for each seat's connection, and the public
events for its spectators.

Each seat's connection gets its messages through its outbox (``server/match/outbox.py``), and so
does each spectator: every public event from the start of the match, then each as it
happens. A spectator may fall at most ``MAX_UNREAD_BYTES`` behind the match; further and
its outbox ends it (``stalled``), so a spectator that never reads cannot make the server hold
an ever longer queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bullring.contract import codec
from bullring.contract.messages import Ended, Event, Outgoing, Started
from bullring.sdk.bot import Bot
from bullring.server.match.answers import MAX_REJECTS_LOGGED
from bullring.server.match.outbox import MAX_UNREAD_BYTES, Outbox, replaced

FELL_BEHIND = (f"this spectator fell {MAX_UNREAD_BYTES // 1024} KiB behind the match and was "
               f"cut off; watch again to start over")
"""Why a spectator's stream is ended when it left too much unread."""


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
        self.watched: list[Event] = []
        """Every public event so far (each shared by every spectator's outbox)."""
        self.watched_bytes = 0
        """The size of ``watched`` as WatchResponses."""
        self.spectators: list[Outbox] = []
        """The outboxes of the spectators watching."""
        self.ended: Ended | None = None
        """The result, once the match has ended."""

    def connect(self, link: SeatLink, outbox: Outbox | None, via: str,
                on_sent: Callable[[str], None], started: Started) -> Outbox:
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
        link.outbox.put_nowait(started)
        if self.ended is not None:
            link.outbox.put_nowait(self.ended)
            if not link.lasting:
                link.outbox.put_nowait(None)
        return link.outbox

    @staticmethod
    def send(link: SeatLink, item: Outgoing) -> bool:
        """Queue ``item`` for ``link``'s connection; False if it has stalled (too much left
        unread, or its transport found its writes waiting too long)."""
        outbox = link.outbox
        assert outbox is not None
        outbox.put_nowait(item)
        return not outbox.stalled

    def publish(self, engine_event: Any) -> list[SeatLink]:
        """Send an engine event (one message, shared) to every connected seat and spectator;
        return the seats whose connection that ended for leaving too much unread."""
        watched = Event(engine_event)
        stalled = [link for link in self.seats
                   if link.outbox is not None and not self.send(link, watched)]
        self.watched.append(watched)
        self.watched_bytes += len(codec.watch_bytes(watched))
        if self.spectators:
            for outbox in self.spectators:
                outbox.put_nowait(watched)
            self.spectators = [o for o in self.spectators if not o.stalled]
        return stalled

    def watch(self) -> Outbox:
        """A spectator's outbox of every public message of this match, from its start; it
        may fall ``MAX_UNREAD_BYTES`` behind."""
        outbox = Outbox(self.watched_bytes + MAX_UNREAD_BYTES, seat=False)
        for watched in self.watched:
            outbox.put_nowait(watched)
        if self.ended is not None:
            outbox.put_nowait(self.ended)
            outbox.put_nowait(None)
        else:
            self.spectators.append(outbox)
        return outbox

    def unwatch(self, outbox: Outbox) -> None:
        """Stop feeding a spectator's outbox (its connection closed)."""
        with contextlib.suppress(ValueError):
            self.spectators.remove(outbox)

    def end(self, ended: Ended, on_sent: Callable[..., None]) -> None:
        """Tell every seat and spectator the result; ``on_sent`` is the runner's request
        hook, unhooked from the outboxes that outlive the match."""
        self.ended = ended
        for link in self.seats:
            if link.outbox is not None:
                link.outbox.put_nowait(ended)
                if not link.lasting:
                    link.outbox.put_nowait(None)
                elif getattr(link.outbox.on_sent, "func", None) == on_sent:
                    # A ladder stream's outbox outlives the match: left pointing here, it
                    # would make runner -> seat -> outbox -> runner a cycle (freed only by a
                    # full collection) once its bot leaves before its next match.
                    link.outbox.on_sent = None
        for outbox in self.spectators:
            outbox.put_nowait(ended)
            outbox.put_nowait(None)
