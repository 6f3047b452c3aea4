"""What the matches of one server have done, counted as they play.

The match runner adds to these plain counters on its per-decision path (a dictionary
increment or two and a histogram bucket per answer, no lock, no call into a metrics library);
``bullring.server.metrics`` reads them when ``/metrics`` is scraped. Every label they are
kept by is a bounded set: a game, a decision kind, a verdict, a termination, a cause. None
holds a token, a decision id, a card or anything else a seat may not see.
"""

from __future__ import annotations

LATENCY_BUCKETS_S: tuple[float, ...] = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                        0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""The upper bounds (seconds) of the decision latency histogram's buckets; one more bucket
counts what is beyond the last (``+Inf``)."""

NO_KIND = "none"
"""The decision kind of an answer that matches no pending decision of its seat."""


class LatencyCounts:
    """A histogram kept as plain numbers: how many observations fell at or under each
    bound (not cumulative; the reader sums them), and their total."""

    def __init__(self, bounds: tuple[float, ...] = LATENCY_BUCKETS_S) -> None:
        self.bounds = bounds
        """The buckets' upper bounds, ascending."""
        self.counts: list[int] = [0] * (len(bounds) + 1)
        """Observations per bucket; the last one is beyond every bound."""
        self.total = 0.0
        """The sum of every observation (seconds)."""

    def observe(self, seconds: float) -> None:
        """Count one observation of ``seconds``."""
        bounds = self.bounds
        index = 0
        last = len(bounds)
        while index < last and seconds > bounds[index]:
            index += 1
        self.counts[index] += 1
        self.total += seconds


class GameTally:
    """The counts of one game's matches on this server."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.started = 0
        """Matches that started."""
        self.finished: dict[str, int] = {}
        """Matches that ended, by termination (``normal``, ``aborted``)."""
        self.requested: dict[str, int] = {}
        """Decisions asked of seats played over the network (one per seat and decision
        point; house bots' are not counted), by decision kind."""
        self.accepted: dict[str, int] = {}
        """Answers taken, by decision kind."""
        self.not_taken: dict[tuple[str, str], int] = {}
        """Answers not taken, by (decision kind, verdict): ``duplicate`` (the decision
        already had an answer, the seat's own or its default: accepted, not taken again)
        or the rejection's reason (``illegal_action``, ...)."""
        self.timeouts: dict[str, int] = {}
        """Timeouts charged, by cause: ``bot`` or ``server`` (the server ran late while the
        answer was due)."""
        self.defaults: dict[str, int] = {}
        """Decisions the referee answered with the default action, by why (``timeout``,
        ``disconnected``)."""
        self.latency = LatencyCounts()
        """Seconds from a request's writing to its answer being taken, per answer taken."""

    def match_started(self) -> None:
        """A match started."""
        self.started += 1

    def match_finished(self, termination: str) -> None:
        """A match ended with ``termination``."""
        self.finished[termination] = self.finished.get(termination, 0) + 1

    def request(self, kind: str) -> None:
        """A decision of ``kind`` was asked of a seat played over the network."""
        self.requested[kind] = self.requested.get(kind, 0) + 1

    def accept(self, kind: str, seconds: float) -> None:
        """An answer to a decision of ``kind`` was taken ``seconds`` after its request was
        written."""
        self.accepted[kind] = self.accepted.get(kind, 0) + 1
        self.latency.observe(seconds)

    def not_take(self, kind: str, verdict: str) -> None:
        """An answer (to a decision of ``kind``, or ``NO_KIND``) was not taken: ``verdict``
        says why."""
        key = (kind, verdict)
        self.not_taken[key] = self.not_taken.get(key, 0) + 1

    def timeout(self, cause: str) -> None:
        """A seat was charged a timeout; ``cause`` is ``bot`` or ``server``."""
        self.timeouts[cause] = self.timeouts.get(cause, 0) + 1

    def default(self, why: str) -> None:
        """The referee answered a decision with the default action (``why``)."""
        self.defaults[why] = self.defaults.get(why, 0) + 1


class MatchTally:
    """The counts of every game's matches on one server, and of answers no match took."""

    def __init__(self) -> None:
        self.games: dict[str, GameTally] = {}
        """Each game's counts, by game id, from its first match on."""
        self.unrouted = 0
        """Answers of a registered bot with no match in progress on this server (rejected
        NOT_PENDING by the transport, before any match saw them)."""

    def game(self, game: str) -> GameTally:
        """The counts of ``game`` (made on first use)."""
        found = self.games.get(game)
        if found is None:
            found = self.games[game] = GameTally(game)
        return found

    def answer_unrouted(self) -> None:
        """Count an answer that reached no match."""
        self.unrouted += 1
