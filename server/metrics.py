"""The server's metrics for Prometheus, served at ``GET /metrics`` on the HTTP port.

Each server has a registry of its own (never prometheus-client's global one), so servers and
tests in one process stay apart. What the matches do is counted by the match runner in plain
counters (``bullring.server.match.tally``) and read here when the metrics are scraped; what
the server holds now (live matches, ladder queues, outboxes) is read from the hub and the
ladder at the same moment. Streams are counted by the transports as they open and close, and
database calls by the store's retry (``bullring.server.store.retry``).

Every label is a bounded set: a game, a decision kind, a verdict, a termination, a cause, a
transport, a store call's name. No label or value carries a token, a decision id, a match
id, a card or a hand. docs/operations.md ("Metrics") lists every metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from bullring.server.ladder.sessions import LadderSessions
from bullring.server.match.clock import loop_watch
from bullring.server.match.hub import MatchHub
from bullring.server.match.outbox import Outbox
from bullring.server.match.tally import GameTally

disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: unused

CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The media type of the metrics page (Prometheus' text format)."""

STREAM_TRANSPORTS = ("grpc_play", "grpc_subscribe", "grpc_watch", "http_stream",
                     "http_long_poll", "http_feed")
"""The ``transport`` label of ``bullring_streams``: bots' gRPC Play and Subscribe streams,
spectators' gRPC Watch streams, bots' HTTP event streams and long-poll connections, and
spectators' HTTP feeds."""

GUARDED_TRANSPORTS = ("grpc_play", "grpc_subscribe", "http_stream")
"""The streams to bots whose writes are guarded, so may end as stalled
(``bullring.server.transports.stalls``)."""

TERMINATIONS = ("normal", "aborted")
"""How a match ends (``bullring_matches_finished_total``'s ``termination``)."""
TIMEOUT_CAUSES = ("bot", "server")
"""Whose lateness a timeout came with (``bullring_timeouts_total``'s ``cause``)."""
DEFAULT_WHYS = ("timeout", "disconnected")
"""Why the referee answered for a seat (``bullring_defaults_total``'s ``why``)."""

ACCESS = {"admin": "requests from a loopback address, and requests with the admin token",
          "token": "requests with the admin token only (behind a reverse proxy on the same "
                   "machine, whose requests all come from loopback)",
          "public": "every request",
          "off": "no request: /metrics is not served"}
"""Who may read ``/metrics``, by the value of ``bullring serve --metrics`` (default admin)."""

DB_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                5.0, 10.0)
"""The upper bounds (seconds) of the database transaction histogram's buckets."""


class ServerMetrics:
    """The metrics of one server: its registry, the counters the transports and the store
    add to, and (once ``watch`` is called) what its hub and ladder hold.

    It is the store's ``RetryObserver``: ``tried``, ``retrying`` and ``gave_up`` count the
    store's calls (they run in worker threads; prometheus-client's metrics are thread-safe)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        """This server's registry (not prometheus-client's global one)."""
        self._streams = Gauge("bullring_streams", "Streams open now, by transport: bots' "
                              "connections to a seat or a ladder, and spectators' feeds",
                              ["transport"], registry=self.registry)
        self._stalled = Counter(
            "bullring_streams_stalled", "Streams to bots ended because their client stopped "
            "reading (a write waited --stall-timeout, or the outbox's unread bytes reached "
            "their cap), by transport", ["transport"], registry=self.registry)
        for transport in STREAM_TRANSPORTS:
            self._streams.labels(transport)
        for transport in GUARDED_TRANSPORTS:
            self._stalled.labels(transport)
        self._db_seconds = Histogram(
            "bullring_db_transaction_seconds", "Seconds each try of a store call (one "
            "transaction) took, whatever its outcome, by call", ["call"],
            buckets=DB_BUCKETS_S, registry=self.registry)
        self._db_retries = Counter(
            "bullring_db_retries", "Tries of a store call that met an unavailable database "
            "(locked, restarting) and were tried again, by call", ["call"],
            registry=self.registry)
        self._db_gave_up = Counter(
            "bullring_db_unavailable", "Store calls given up after the database stayed "
            "unavailable for the whole retry budget (--db-retry), by call", ["call"],
            registry=self.registry)
        ProcessCollector(registry=self.registry)

    def identify(self, instance: str, worker: int | None) -> None:
        """Name the process these metrics are of: its server instance id and its index among
        the workers of ``bullring serve --workers N`` (``-`` when it is the only one), as
        ``bullring_server_info``: one scrape of a shared port reaches one worker."""
        Info("bullring_server", "The server process these metrics are of",
             registry=self.registry).info(
            {"instance": instance, "worker": "-" if worker is None else str(worker)})

    def watch(self, hub: MatchHub, ladder: LadderSessions | None = None) -> None:
        """Report what ``hub``'s matches do and hold, and ``ladder``'s queues."""
        self.registry.register(_LiveCollector(hub, ladder))

    def stream(self, transport: str) -> Gauge:
        """The gauge of the streams open on ``transport`` (one of ``STREAM_TRANSPORTS``):
        ``inc()`` when one opens, ``dec()`` when it ends."""
        return self._streams.labels(transport)

    def stalled(self, transport: str) -> None:
        """A stream to a bot on ``transport`` was ended as stalled."""
        self._stalled.labels(transport).inc()

    def tried(self, what: str, seconds: float) -> None:
        """One try of the store call ``what`` took ``seconds``."""
        self._db_seconds.labels(what).observe(seconds)

    def retrying(self, what: str) -> None:
        """A try of ``what`` met an unavailable database and is tried again."""
        self._db_retries.labels(what).inc()

    def gave_up(self, what: str) -> None:
        """``what`` was given up: the database stayed unavailable for its budget."""
        self._db_gave_up.labels(what).inc()

    def exposition(self) -> bytes:
        """Every metric, in Prometheus' text format (call it on the server's event loop,
        where the matches count, so each figure is read whole)."""
        return generate_latest(self.registry)


class _LiveCollector:
    """Reads the counts of a hub's matches, and what the hub and ladder hold, at each
    scrape."""

    def __init__(self, hub: MatchHub, ladder: LadderSessions | None) -> None:
        self.hub = hub
        self.ladder = ladder

    def collect(self) -> Iterable[Metric]:
        """The metric families, read now."""
        tallies = self._tallies()
        yield from _match_counts(tallies)
        unrouted = CounterMetricFamily(
            "bullring_answers_unrouted", "Answers of a registered bot that has no match in "
            "progress on this server (rejected NOT_PENDING before any match saw them)")
        unrouted.add_metric([], self.hub.tally.unrouted)
        yield unrouted
        live = GaugeMetricFamily("bullring_matches_live", "Matches playing on this server "
                                 "now (started, not ended), by game", labels=["game"])
        playing = dict.fromkeys(tallies, 0)
        for runner in list(self.hub.runners.values()):
            if runner.started.is_set() and not runner.done.is_set():
                game = runner.spec.id
                playing[game] = playing.get(game, 0) + 1
        for game, count in sorted(playing.items()):
            live.add_metric([game], count)
        yield live
        yield from self._ladder()
        yield from self._outboxes()
        late = CounterMetricFamily(
            "bullring_event_loop_late_seconds", "Seconds the server's event loop ran late "
            "(beyond 10 ms a tick), summed: time on no seat's clock")
        try:
            late.add_metric([], loop_watch().late_now())
        except RuntimeError:  # read outside the event loop: no figure
            pass
        else:
            yield late

    def _tallies(self) -> dict[str, GameTally]:
        """The counts of every game that has a ladder here or has played a match here."""
        tally = self.hub.tally
        if self.ladder is not None:
            for game in self.ladder.settings:
                tally.game(game)
        return dict(sorted(tally.games.items()))

    def _ladder(self) -> Iterator[Metric]:
        waiting = GaugeMetricFamily(
            "bullring_ladder_waiting", "Registered bots connected to a game's ladder and "
            "waiting for a rated table (house bots and practice-only connections are not "
            "counted), by game", labels=["game"])
        connected = GaugeMetricFamily(
            "bullring_ladder_connected", "Registered bots connected to a game's ladder "
            "(waiting or playing), by game", labels=["game"])
        ladder = self.ladder
        if ladder is not None:
            for game in sorted(ladder.settings):
                rated = ladder.rated_streams(game)
                waiting.add_metric([game], sum(s.bot not in ladder.seated for s in rated))
                connected.add_metric([game], sum(s.game == game
                                                 for s in ladder.connected()))
        yield waiting
        yield connected

    def _outboxes(self) -> Iterator[Metric]:
        seen: dict[int, Outbox] = {}
        for runner in list(self.hub.runners.values()):
            for link in runner.seats:
                if link.outbox is not None:
                    seen[id(link.outbox)] = link.outbox
            for outbox in runner.feed.spectators:
                seen[id(outbox)] = outbox
        if self.ladder is not None:
            for session in self.ladder.connected():
                seen[id(session.outbox)] = session.outbox
        depths = [outbox.qsize() for outbox in seen.values()]
        total = GaugeMetricFamily(
            "bullring_outbox_messages", "Messages waiting in the outboxes of every seat "
            "connection and spectator, to be written to them")
        total.add_metric([], sum(depths))
        deepest = GaugeMetricFamily(
            "bullring_outbox_messages_max", "Messages waiting in the deepest outbox (a "
            "connection is ended once it leaves 1,000 unread)")
        deepest.add_metric([], max(depths, default=0))
        yield total
        yield deepest


def _match_counts(tallies: dict[str, GameTally]) -> Iterator[Metric]:
    """The counter and histogram families of the games' tallies."""
    started = CounterMetricFamily("bullring_matches_started", "Matches that started, by game",
                                  labels=["game"])
    finished = CounterMetricFamily("bullring_matches_finished", "Matches that ended, by game "
                                   "and termination (normal, aborted)",
                                   labels=["game", "termination"])
    requested = CounterMetricFamily(
        "bullring_decisions_requested", "Decisions asked of seats played over the network "
        "(one per seat and decision point; house bots' are not counted), by game and "
        "decision kind", labels=["game", "kind"])
    answers = CounterMetricFamily(
        "bullring_answers", "Answers to decisions, by game, decision kind (none: the answer "
        "matched no pending decision) and verdict: accepted, duplicate (the decision already "
        "had an answer, the seat's own or its default: accepted, not taken again), or the "
        "rejection's reason (illegal_action, malformed_action, not_pending)",
        labels=["game", "kind", "verdict"])
    timeouts = CounterMetricFamily(
        "bullring_timeouts", "Timeouts charged to seats, by game and cause: bot (the server "
        "ran on time while the answer was due) or server (the server's event loop ran late "
        "meanwhile; that lateness was not counted against the seat, but the timeout came "
        "with it)", labels=["game", "cause"])
    defaults = CounterMetricFamily(
        "bullring_defaults", "Decisions the referee answered with the default action, by "
        "game and why (timeout, disconnected)", labels=["game", "why"])
    latency = HistogramMetricFamily(
        "bullring_decision_seconds", "Seconds from a decision request's writing to its "
        "connection to its answer being taken, as the server clocks the deadline, per "
        "answer accepted, by game", labels=["game"])
    for game, tally in tallies.items():
        started.add_metric([game], tally.started)
        for termination in _known(TERMINATIONS, tally.finished):
            finished.add_metric([game, termination], tally.finished.get(termination, 0))
        for kind, count in sorted(tally.requested.items()):
            requested.add_metric([game, str(kind)], count)
        for kind, count in sorted(tally.accepted.items()):
            answers.add_metric([game, str(kind), "accepted"], count)
        for (kind, verdict), count in sorted(tally.not_taken.items()):
            answers.add_metric([game, str(kind), verdict], count)
        for cause in _known(TIMEOUT_CAUSES, tally.timeouts):
            timeouts.add_metric([game, cause], tally.timeouts.get(cause, 0))
        for why in _known(DEFAULT_WHYS, tally.defaults):
            defaults.add_metric([game, why], tally.defaults.get(why, 0))
        counts = tally.latency
        buckets: list[tuple[str, float]] = []
        below = 0
        for bound, count in zip(counts.bounds, counts.counts, strict=False):
            below += count
            buckets.append((str(bound), below))
        buckets.append(("+Inf", sum(counts.counts)))
        latency.add_metric([game], buckets, counts.total)
    yield from (started, finished, requested, answers, timeouts, defaults, latency)


def _known(names: tuple[str, ...], counted: dict[str, int]) -> list[str]:
    """``names`` (reported at 0 before their first count, so a rate sees the first one) and
    any other name ``counted`` holds."""
    return [*names, *sorted(set(counted) - set(names))]

