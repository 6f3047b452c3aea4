"""A Bullring bot over HTTP with Python's standard library alone: the ``Bot`` class to
subclass and the runner that plays it (``run``).

The runner joins a ladder with a registered bot's token (``--ladder GAME``; without it, a seat
token plays its one match), reads the messages by long-poll, answers each decision within the
time left less a margin, reconnects with backoff, and stops on SIGINT/SIGTERM (exit 0), a
refused token (3), a newer connection on the same token (5), ``--matches N`` played (0) or
``--give-up-after`` seconds without a working connection (4). Before the server has ever
answered, an address that refuses connections for a second, or that answers in HTTP/2 (a
gRPC port), ends the run at once (4), saying so.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import random
import signal
import sys
import threading
import time
import traceback
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from types import FrameType
from typing import Any, NoReturn

from bullring_messages import (
    Action,
    Answer,
    DecisionRequest,
    MatchEnded,
    MatchStarted,
    NoThanksObservation,
    PlayResponse,
    PublicEvent,
    SixNimmtObservation,
)

log = logging.getLogger("bullring")


class Bot:
    """A bot: override the methods of the decisions your games ask. Each gets what the seat
    may know (``seen``, the game's observation) and the decision request ``d``: ``d.legal``
    is every action it may answer, ``d.time_left_ms`` the time left. A method left alone
    answers the first legal action; one that raises is logged with its traceback and not
    answered (the server plays the default action). A method may call ``comment`` to say
    why, as the Python SDK's bots do."""

    games = ("six_nimmt", "no_thanks")
    """The games this bot plays."""

    def play_card(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt!: a card of ``seen.hand``."""
        return _first(d).card or 0

    def choose_row(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt!: the row (0..3) to take when the card is lower than every row's end."""
        return _first(d).row or 0

    def draft_card(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt! professional variant: a card of the draft pool."""
        return _first(d).card or 0

    def take_or_pass(self, seen: NoThanksObservation, d: DecisionRequest) -> str:
        """No Thanks!: "take" the face-up card (and its chips) or "pass" (pay a chip)."""
        return _first(d).word or "take"

    def reveal_hidden_card(self, seen: NoThanksObservation, d: DecisionRequest) -> str:
        """No Thanks! hidden_card variant: "reveal" or "keep"."""
        return "keep"

    _comment = ""

    def comment(self, text: str) -> None:
        """Say why, in the bot's own words, with the answer being decided: call it in the
        decision method before returning; a later call replaces it. At most 200 characters
        and no control characters; stored in the replay and shown beside the move once the
        move is public. A comment the server would refuse is logged and left out; the
        answer is sent without it."""
        self._comment = text

    def pop_comment(self) -> str:
        """The comment given since the last call (empty: none), cleared: what the runner
        sends with the answer the decision method has just returned."""
        text, self._comment = self._comment, ""
        return text

    def on_match_started(self, started: MatchStarted) -> None:
        """A match starts: the game, the settings, this seat and every seat's name."""

    def on_event(self, event: PublicEvent) -> None:
        """Something public happened in the match."""

    def on_match_ended(self, ended: MatchEnded) -> None:
        """The match is over: totals and ranks by seat."""


def _first(d: DecisionRequest) -> Action:
    return d.legal[0]


MAX_COMMENT_CHARS = 200
"""The longest comment an answer may carry (``Answer.comment``), in characters."""


def comment_problem(comment: str) -> str | None:
    """What the server would refuse in a comment (too long, or a control character), or
    None if it may be sent."""
    if len(comment) > MAX_COMMENT_CHARS:
        return f"it has {len(comment)} characters; at most {MAX_COMMENT_CHARS} are allowed"
    for index, char in enumerate(comment):
        if unicodedata.category(char) == "Cc":
            return f"it holds the control character U+{ord(char):04X} at position {index}"
    return None


ANSWERS = {"DECISION_KIND_PLAY_CARD": ("play_card", "card"),
           "DECISION_KIND_CHOOSE_ROW": ("choose_row", "row"),
           "DECISION_KIND_DRAFT_CARD": ("draft_card", "card"),
           "DECISION_KIND_TAKE_OR_PASS": ("take_or_pass", "word"),
           "DECISION_KIND_REVEAL_HIDDEN_CARD": ("reveal_hidden_card", "word")}
"""Each decision kind's Bot method and the Action field its answer goes in."""

STOP_FOR_GOOD = {"CLOSE_REASON_REPLACED": 5, "CLOSE_REASON_TOKEN_REVOKED": 3,
                 "CLOSE_REASON_BOT_DISABLED": 3}
"""Closing reasons after which reconnecting is wrong, and the exit status of each."""


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived."""


class Refused(Exception):
    """The server refused the bot for good; ``status`` is the exit status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


REFUSED_FOR_S = 1.0
"""How long connections may be refused, before the server has ever answered, until the run
stops: nothing listens at that address."""


def wrong_address(error: BaseException, base: str) -> tuple[bool, str] | None:
    """Why ``base`` is not the HTTP API, when ``error`` shows it: (refused, message), or None
    when retrying may help."""
    reason = getattr(error, "reason", error)
    if isinstance(reason, ConnectionRefusedError):
        return True, (f"{base} refused the connection: nothing listens there (is `bullring "
                      f"serve` running, and is this the address it printed as 'web page and "
                      f"HTTP API on ...'?)")
    if isinstance(error, http.client.BadStatusLine) and str(error.args[0]).startswith("\x00"):
        return False, (f"{base} answers in HTTP/2 frames: it is a gRPC port (Bullring's gRPC "
                       f"port?), not the HTTP API; `bullring serve` prints the HTTP address as "
                       f"'web page and HTTP API on http://HOST:PORT/'")
    return None


class Runner:
    """Plays one bot over the HTTP API until it is told to stop."""

    def __init__(self, bot: Bot, args: argparse.Namespace) -> None:
        self.bot = bot
        self.base = args.server.rstrip("/")
        self.headers = {"Authorization": f"Bearer {args.token}",
                        "Content-Type": "application/json"}
        self.ladder: str = args.ladder or ""
        self.matches: int = args.matches
        self.margin_ms: int = args.margin_ms
        self.give_up_after: float = args.give_up_after
        self.played = 0
        self.reached = False
        self.match_id = ""
        self.seat = -1
        """This bot's seat in ``match_id``, from its MatchStarted."""
        self.answered: dict[str, Answer] = {}

    def call(self, method: str, path: str, body: Any = None, timeout: float = 10) -> Any:
        """One JSON request; its decoded answer. Refusals for good raise Refused."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            if e.code in (401, 403):
                raise Refused(3, f"the server refused the token ({e.code}): {text}") from e
            if 400 <= e.code < 500 and e.code != 408:
                raise Refused(1, f"the server refused the request ({e.code}): {text}") from e
            raise ConnectionError(f"{e.code}: {text}") from e

    def run(self) -> int:
        """Play until the end; the exit status."""
        backoff, last_working, after = 0.05, time.monotonic(), None
        refused_since: float | None = None
        while True:
            query = {"wait_ms": "10000"}
            if self.ladder:
                query["ladder"] = self.ladder
                if self.matches:
                    query["matches"] = str(self.matches - self.played)
            if after is not None:
                query["after"] = str(after)
            else:
                log.log(logging.DEBUG if refused_since else logging.INFO, "connecting to %s%s",
                        self.base, f" for the {self.ladder} ladder" if self.ladder else "")
            try:
                result = self.call("GET", "/api/play/poll?" + urllib.parse.urlencode(query),
                                   timeout=25)
            except Refused as e:
                log.error("%s; not retrying", e)
                return e.status
            except (OSError, ConnectionError, ValueError, http.client.HTTPException) as e:
                wrong = None if self.reached else wrong_address(e, self.base)
                if wrong is not None:
                    refused, message = wrong
                    now = time.monotonic()
                    refused_since = refused_since or now
                    if not refused or now - refused_since >= REFUSED_FOR_S:
                        log.error("%s", message)
                        return 4
                if time.monotonic() - last_working > self.give_up_after:
                    log.error("giving up: no working connection for %g s (%s)",
                              self.give_up_after, e)
                    return 4
                pause = backoff * (0.5 + random.random() / 2)
                log.log(logging.DEBUG if wrong else logging.WARNING,
                        "connection lost (%s); retrying in %.0f ms", e, pause * 1000)
                time.sleep(pause)
                backoff = min(2.0, backoff * 2)
                continue
            backoff, last_working, self.reached = 0.05, time.monotonic(), True
            for raw in result.get("messages", []):
                after = raw.get("seq", after)
                status = self.handle(PlayResponse.from_json(raw), time.monotonic())
                if status is not None:
                    return status
            if self.done():
                return 0
            if result.get("closed"):
                after = None

    def done(self) -> bool:
        """Whether the run has played what it was asked to."""
        return (self.matches > 0 and self.played >= self.matches) or \
            (not self.ladder and self.played > 0)

    def handle(self, message: PlayResponse, received: float) -> int | None:
        """Act on one message; an exit status if the run is over."""
        if message.batch is not None:
            for inner in message.batch.messages:
                status = self.handle(inner, received)
                if status is not None:
                    return status
        elif message.ladder_queued is not None:
            log.info("waiting on the %s ladder as %s", message.ladder_queued.game,
                     message.ladder_queued.bot)
        elif message.match_started is not None:
            started = message.match_started
            if started.match_id != self.match_id:
                self.answered.clear()
            self.match_id = started.match_id
            self.seat = started.seat
            log.info("match %s started: %s, seat %d of %s", started.match_id, started.game,
                     started.seat, started.seat_names)
            self.hook("on_match_started", started)
        elif message.decision is not None:
            self.answer(message.decision, received)
        elif message.rejected is not None:
            log.warning("answer to %s rejected (%s): %s", message.rejected.decision_id,
                        message.rejected.reason, message.rejected.message)
        elif message.event is not None:
            log.debug("event %s", message.event)
            self.hook("on_event", message.event)
        elif message.match_ended is not None:
            ended = message.match_ended
            self.played += 1
            termination = str(ended.termination).removeprefix("TERMINATION_").lower()
            you = ""
            if 0 <= self.seat < min(len(ended.totals), len(ended.ranks)):
                you = (f"; you (seat {self.seat}): total {ended.totals[self.seat]}, "
                       f"rank {ended.ranks[self.seat]}")
            print(f"match {self.match_id} ended: totals {ended.totals} ranks {ended.ranks} "
                  f"({termination}){you}", flush=True)
            self.hook("on_match_ended", ended)
        elif message.closed is not None:
            reason = str(message.closed.reason)
            if reason in STOP_FOR_GOOD:
                log.error("the server closed the connection (%s): %s; not reconnecting",
                          reason, message.closed.message)
                return STOP_FOR_GOOD[reason]
            log.info("the server closed the connection (%s)", reason)
        return None

    def hook(self, name: str, value: Any) -> None:
        """Call one of the bot's on_* methods; log what it raises."""
        try:
            getattr(self.bot, name)(value)
        except Exception:
            log.error("the bot's %s raised:\n%s", name, traceback.format_exc())

    def answer(self, d: DecisionRequest, received: float) -> None:
        """Ask the bot (in a thread, for the time left less the margin) and send its answer,
        with its comment if it has one."""
        answer = self.answered.get(d.decision_id)
        if answer is None:
            method, slot = ANSWERS.get(d.kind, ("", ""))
            if not method:
                log.error("decision %s: a kind this runner does not know (%s)",
                          d.decision_id, d.kind)
                return
            budget = (d.time_left_ms - self.margin_ms) / 1000 - (time.monotonic() - received)
            outcome: list[tuple[bool, Any, str]] = []

            def think() -> None:
                try:
                    seen = d.six_nimmt if d.six_nimmt is not None else d.no_thanks
                    value = getattr(self.bot, method)(seen, d)
                except Exception:
                    self.bot.pop_comment()  # a comment on no answer goes with none
                    outcome.append((False, traceback.format_exc(), ""))
                    return
                outcome.append((True, value, self.bot.pop_comment()))

            thinker = threading.Thread(target=think, name="bot", daemon=True)
            thinker.start()
            thinker.join(max(budget, 0))
            if not outcome:
                log.error("missed decision %s (%s): the bot took more than %.0f ms; the server "
                          "plays the default", d.decision_id, d.kind, budget * 1000)
                return
            answered, value, comment = outcome[0]
            if not answered:
                log.error("decision %s (%s): the bot raised; the server plays the default "
                          "action\n%s", d.decision_id, d.kind, value)
                return
            problem = comment_problem(comment)
            if problem is not None:
                log.warning("decision %s: the comment %r is left out: %s", d.decision_id,
                            comment, problem)
                comment = ""
            answer = Answer(decision_id=d.decision_id, action=Action(**{slot: value}),
                            comment=comment)
            self.answered[d.decision_id] = answer
        body: dict[str, Any] = {"decision_id": answer.decision_id,
                                "action": answer.action.to_json()}
        if answer.comment:
            body["comment"] = answer.comment
        verdict = self.call("POST", "/api/play/answer", body)
        if "accepted" in verdict:
            log.debug("decision %s (%s): answered %s", d.decision_id, d.kind, body)
        else:
            log.warning("decision %s: answer %s rejected: %s", d.decision_id, body,
                        verdict.get("rejected"))


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signal.Signals(signum).name)


def run(bot: Bot, argv: list[str] | None = None) -> NoReturn:
    """Run ``bot`` with the command line and exit with the runner's status."""
    parser = argparse.ArgumentParser(description="Play a Bullring bot over HTTP.")
    parser.add_argument("--server", required=True, help="the HTTP API, http://HOST:PORT")
    parser.add_argument("--token", required=True, help="the bot's token")
    parser.add_argument("--ladder", help="the game whose ladder to play (six_nimmt, no_thanks)")
    parser.add_argument("--matches", type=int, default=0, help="stop after N matches")
    parser.add_argument("--margin-ms", type=int, default=50, help="answer this long before "
                        "the deadline (default 50)")
    parser.add_argument("--give-up-after", type=float, default=60,
                        help="seconds without a working connection before giving up")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every verdict")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(message)s", stream=sys.stderr)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop)
    try:
        status = Runner(bot, args).run()
    except Stopped as e:
        log.info("%s: stopping", e)
        status = 0
    sys.exit(status)
