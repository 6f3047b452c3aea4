"""Practice matches and challenges, the same over gRPC (ChallengeService) and HTTP
(``/api/challenges``).

A registered bot (its token) challenges named opponents to an unrated match of a game:
house bots (``house:greedy``) or registered bots. A practice match names only house bots
and is accepted at once; a registered opponent's owner accepts or declines with that bot's
token, or sets the bot to accept every challenge. Once accepted, the ladder seats the match
as soon as every registered bot in it waits on the game's ladder (``Join(ladder=GAME)``),
taking at most half of a named bot's matches while rated tables can seat it
(``bullring.server.ladder.seating``); it is stored unrated (``rated`` false in MatchStarted,
the match log and the replay) and never changes a rating. The first decline ends the challenge; its
status and message say who declined and why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from bullring.server.errors import InvalidChallengeError, NotAuthenticatedError, NotFoundError
from bullring.server.ladder.seating import Ladder
from bullring.server.match.hub import MatchHub
from bullring.server.quotas import HourlyQuota, MatchCaps, Quotas
from bullring.server.store import Challenge, UnknownBotNameError
from bullring.server.store.models import BotRow

MAX_OPPONENTS = 16
"""The most opponents a challenge may name (beyond every game's table)."""


class Challenges:
    """The challenge calls, for the bot whose token each one carries."""

    def __init__(self, hub: MatchHub, ladder: Ladder, quotas: Quotas | None = None,
                 caps: MatchCaps | None = None) -> None:
        self.hub = hub
        self.ladder = ladder
        self.quotas = Quotas() if quotas is None else quotas
        """How many challenges a bot may have waiting, and ask for per hour."""
        self.caps = MatchCaps() if caps is None else caps
        """The largest table a challenge may ask for (its settings are the ladder's)."""
        self.hourly = HourlyQuota(self.quotas.challenges_per_hour_per_bot,
                                  "challenges and practice matches asked for by this bot",
                                  "--challenges-per-hour")

    async def bot(self, token: str) -> BotRow:
        """The registered bot ``token`` belongs to (UNAUTHENTICATED otherwise)."""
        found = await self.hub.bot_for_token(token) if token.startswith("bot_") else None
        if found is None:
            raise NotAuthenticatedError("this is not a registered bot's token")
        return found

    async def create(self, token: str, game: str, opponents: Sequence[str]) -> Challenge:
        """Challenge ``opponents`` (in seat order after the caller) to a match of ``game``."""
        bot = await self.bot(token)
        if not opponents or len(opponents) > MAX_OPPONENTS:
            raise InvalidChallengeError(f"name 1 to {MAX_OPPONENTS} opponents: house:KIND or "
                                        f"registered bots")
        if any(not 0 < len(name) <= 72 for name in opponents):
            raise InvalidChallengeError("an opponent is house:KIND or a registered bot's name "
                                        "(1-64 characters)")
        self.hourly.take(bot.name)
        made = await asyncio.to_thread(self.ladder.challenge, bot, game, list(opponents),
                                       self.quotas.challenges_open_per_bot, self.caps)
        if made.status == "accepted":
            self.ladder.answered()
        return made

    async def mine(self, token: str) -> list[Challenge]:
        """The newest challenges the caller made or is named in, newest first."""
        bot = await self.bot(token)
        return await asyncio.to_thread(self.hub.store.challenges, bot.name)

    async def get(self, token: str, challenge_id: str) -> Challenge:
        """One challenge the caller made or is named in."""
        bot = await self.bot(token)
        found = await asyncio.to_thread(self.hub.store.challenge, _checked(challenge_id))
        if bot.name not in found.bots:
            raise NotFoundError(f"no challenge {challenge_id!r} names {bot.name!r}")
        return found

    async def answer(self, token: str, challenge_id: str, accept: bool,
                     reason: str = "") -> Challenge:
        """Accept or decline a challenge naming the caller; its challenger declining it
        withdraws it."""
        bot = await self.bot(token)
        answered = await asyncio.to_thread(self.hub.store.answer_challenge,
                                           _checked(challenge_id), bot.name, accept, reason)
        if answered.status == "accepted":
            self.ladder.answered()
        return answered

    async def auto_accept(self, token: str, on: bool) -> None:
        """Whether the caller accepts every challenge naming it without being asked (the
        challenges already pending still wait for an answer)."""
        bot = await self.bot(token)
        try:
            await asyncio.to_thread(self.hub.store.set_auto_accept, bot.name, on)
        except UnknownBotNameError as exc:
            raise NotFoundError(str(exc)) from None


def _checked(challenge_id: str) -> str:
    if not 0 < len(challenge_id) <= 64 or "\x00" in challenge_id:
        raise NotFoundError(f"no challenge {challenge_id[:64]!r}")
    return challenge_id
