"""The class a bot author subclasses: one method per decision kind, or one ``decide``.

A bot receives the same observation whether it plays in the local arena or over the wire:
the seat's own view of the game with its pending decision and every legal action inside.
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import Any

from bullring.contract.comments import comment_problem
from bullring.referee.core import Action, Decision, DecisionKind
from bullring.sdk.errors import CommentError


class Bot:
    """Base class of every bot. Override ``decide``, or the methods of the kinds you play.

    ``self.rng`` is a ``random.Random`` seeded by whoever runs the bot, so that a game
    replayed with the same seed plays out the same way. It is made on first use: seeding a
    Mersenne Twister costs about 5 us, a fortieth of an arena game, which a bot that never
    draws should not pay four times a game.
    """

    name = "bot"
    """The name the bot plays under unless its runner gives another."""

    games: tuple[str, ...] = ("six_nimmt", "no_thanks")
    """The game ids this bot can play."""

    decision_only = False
    """True when ``decide`` reads nothing of the observation but its ``decision``: the local
    arena then calls ``decide_on(decision)`` and builds no observation (the same answers)."""

    _comment = ""
    """The comment on the answer being decided (``comment``), until a runner takes it."""

    def __init__(self, seed: int = 0) -> None:
        self._rng_seed = seed

    @cached_property
    def rng(self) -> random.Random:
        """This bot's own random stream, seeded with the seed it was made with (assignable)."""
        return random.Random(self._rng_seed)

    def decide(self, observation: Any) -> Action:
        """Answer the observation's pending decision; by default, call the kind's method."""
        kind = observation.decision.kind
        if kind is DecisionKind.PLAY_CARD:
            return self.play_card(observation)
        if kind is DecisionKind.CHOOSE_ROW:
            return self.choose_row(observation)
        if kind is DecisionKind.DRAFT_CARD:
            return self.draft_card(observation)
        if kind is DecisionKind.TAKE_OR_PASS:
            return self.take_or_pass(observation)
        return self.reveal_hidden_card(observation)

    def comment(self, text: str) -> None:
        """Say why, in the bot's own words, with the answer being decided: call it in
        ``decide`` (or a kind's method) before returning the action; a later call replaces
        it. At most 200 characters on one line (no control characters, so no line breaks),
        else ``ValueError`` says what is wrong. The server keeps it in the match's replay
        and nobody sees it before the match ends: the replay viewer and ``/tv`` then show it
        beside the move."""
        problem = comment_problem(text)
        if problem is not None:
            raise CommentError(f"{problem}: {text[:40]!r}...")
        self._comment = text

    def pop_comment(self) -> str:
        """The comment given since the last call (empty: none), cleared: what a runner
        sends with the answer ``decide`` just returned."""
        text, self._comment = self._comment, ""
        return text

    def decide_on(self, decision: Decision) -> Action:
        """Answer ``decision`` alone; only bots with ``decision_only`` implement it."""
        raise NotImplementedError(f"{type(self).__name__} decides from the whole observation")

    def play_card(self, observation: Any) -> int:
        """6 nimmt!: return a card from ``observation.hand``."""
        raise NotImplementedError(f"{type(self).__name__} does not play cards")

    def choose_row(self, observation: Any) -> int:
        """6 nimmt!: return the index (0..3) of the row to take."""
        raise NotImplementedError(f"{type(self).__name__} does not choose rows")

    def draft_card(self, observation: Any) -> int:
        """6 nimmt! professional: return a card from ``observation.pool``."""
        return min(observation.pool)  # type: ignore[no-any-return]

    def take_or_pass(self, observation: Any) -> str:
        """No Thanks!: return ``"take"`` or ``"pass"``."""
        raise NotImplementedError(f"{type(self).__name__} does not play No Thanks!")

    def reveal_hidden_card(self, observation: Any) -> str:
        """No Thanks! hidden_card: return ``"reveal"`` or ``"keep"``; keeps by default."""
        return "keep"
