"""The local arena: many full games in-process, the same engine and observations as the server.

Game ``i`` of a run with root seed ``S`` is seeded from ``(S, i)`` alone and seats its bots
rotated by ``i``, so results do not depend on how games are spread over worker processes.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import random
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from bullring.commandline import bot_traceback
from bullring.referee.core import Action, ActionError
from bullring.referee.registry import AnyGameState, get_game
from bullring.referee.replay import answer_event, build_replay, dumps
from bullring.referee.seeding import derive_seed, derive_seeds
from bullring.sdk.bot import Bot
from bullring.sdk.bot_spec import bot_factory
from bullring.sdk.errors import ArenaSetupError, BotFailedError, UnknownBotError
from bullring.sdk.house import HOUSE_BOTS
from bullring.sdk.worker_pool import over_workers

T = TypeVar("T")
"""What one game of a run gives back."""


class BotRaisedError(BotFailedError):
    """An author's bot raised: ``spec`` names it, ``bot`` is the instance that raised and
    ``detail`` its traceback, trimmed to the author's code."""

    def __init__(self, message: str, spec: str, bot: Bot | None = None,
                 detail: str = "") -> None:
        super().__init__(message, detail=detail)
        self.spec = spec
        self.bot = bot

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled across worker processes without the bot instance."""
        return (BotRaisedError, (str(self), self.spec, None, self.detail))


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished arena game: who sat where, and what each seat scored."""

    index: int
    bots: tuple[str, ...]
    """Bot name by seat."""
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    round_scores: tuple[tuple[int, ...], ...]
    """Per round, each seat's penalty (6 nimmt!) or score (No Thanks!)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its fields, rebuilt by the constructor: a third of the time the
        dataclass's own state methods take, for the results workers send back."""
        return (GameOutcome, (self.index, self.bots, self.totals, self.ranks,
                              self.round_scores))


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    """What an arena run plays: the game, the bots in seat order, the settings and seed."""

    game: str
    bots: tuple[str, ...]
    games: int
    seed: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)
    replays: Path | None = None


def seating(bots: Sequence[str], index: int) -> tuple[str, ...]:
    """Bot names by seat for game ``index``: the lineup rotated by one seat per game."""
    shift = index % len(bots)
    return (*bots[shift:], *bots[:shift])


def play_game(state: AnyGameState, players: Sequence[Bot],
              log: list[dict[str, Any]] | None = None) -> AnyGameState:
    """Play ``state`` to its end, asking ``players[seat]`` for every decision.

    A bot with ``decision_only`` is asked ``decide_on(decision)``: no observation is built
    for it, and it answers exactly what ``decide`` would.
    """
    observe = state.observation
    apply = state.apply
    decide = [player.decide for player in players]
    if log is None:
        on = [player.decide_on if player.decision_only else None for player in players]
        while not state.over:
            answers = {}
            pending = state.pending
            for seat in pending:
                answer = on[seat]
                if answer is None:
                    answers[seat] = decide[seat](observe(seat))
                else:
                    answers[seat] = answer(pending[seat])
            apply(answers)
        return state
    while not state.over:
        answers = {seat: decide[seat](observe(seat)) for seat in state.pending}
        log.extend(answer_event(state, s, a, comment=players[s].pop_comment())
                   for s, a in answers.items())
        apply(answers)
    return state


def make_bot(name: str, game: str, seed: int = 0) -> Bot:
    """A bot for ``game``: the house bot ``name`` (``greedy``), or the bot of a runner spec
    (``house:NAME``, ``package.module:ClassName``, ``path/to/file.py:ClassName``), so an
    author's own bot plays in the arena exactly as it does over the wire (resolved as the
    tournament resolves its entrants)."""
    return bot_maker(name, game)(seed)


_factories: dict[tuple[str, str], Callable[[int], Bot]] = {}


def bot_maker(spec: str, game: str) -> Callable[[int], Bot]:
    """Return a maker of seeded bots for entrant ``spec`` at ``game``; raise
    ``UnknownBotError`` naming the entrant if it is unknown or does not play ``game``."""
    key = (spec, game)
    if key in _factories:
        return _factories[key]
    try:
        factory = bot_factory(spec)
        factory(game, 0)  # a bot that does not play the game says so now
    except ValueError as exc:
        raise UnknownBotError(str(exc)) from None
    if spec in HOUSE_BOTS:
        make: Callable[[int], Bot] = HOUSE_BOTS[spec]  # the class itself: no call in between
    else:
        def guarded(seed: int) -> Bot:
            return _Guarded(spec, factory(game, seed))
        make = guarded
    _factories[key] = make
    return make


class _Guarded(Bot):
    """An entrant's bot whose exceptions come out as a ``BotRaisedError`` naming it, with the
    traceback of its own code."""

    def __init__(self, spec: str, inner: Bot) -> None:
        self.spec = spec
        self.inner = inner

    @property
    def rng(self) -> random.Random:
        """The inner bot's own stream (made when first read, as every bot's is)."""
        return self.inner.rng

    def decide(self, observation: Any) -> Action:
        """The inner bot's answer."""
        try:
            return self.inner.decide(observation)
        except Exception as exc:
            trace = bot_traceback(exc, lambda file: file in _FRAMEWORK)
            raise BotRaisedError(f"{type(exc).__name__}: {exc} (on a "
                                 f"{observation.decision.kind} decision)", self.spec, self,
                                 trace) from exc


_FRAMEWORK = frozenset({__file__, sys.modules[Bot.__module__].__file__})
"""Files whose frames a bot's traceback leaves out: this wrapper and the Bot base class."""


def resolved(config: ArenaConfig) -> ArenaConfig:
    """``config`` naming its game by versioned id (``six_nimmt/1``): a run looks the newest
    version of a bare id up once, not once a game."""
    return replace(config, game=get_game(config.game).versioned_id)


def play_one(config: ArenaConfig, index: int) -> GameOutcome:
    """Play game ``index`` of ``config`` and return its outcome (writing its replay if asked)."""
    spec = get_game(config.game)
    names = seating(config.bots, index)
    seeds = derive_seeds(config.seed, len(names), "bots", index)
    players = [make_bot(name, spec.id, seed) for name, seed in zip(names, seeds, strict=True)]
    return play_seated(spec.versioned_id, names, players, config.settings,
                       derive_seed(config.seed, "game", index), index,
                       config.replays, f"arena-{config.seed}-{index:06d}")


def play_seated(game: str, names: tuple[str, ...], players: Sequence[Bot],
                settings: Mapping[str, Any], game_seed: int, index: int,
                replays: Path | None = None, match_id: str = "") -> GameOutcome:
    """Play one game of ``game`` seeded ``game_seed``, ``players[seat]`` named ``names[seat]``.

    The arena and the tournament both play through here; ``replays`` (a folder) gets
    ``MATCH_ID.json`` when given. A bot that raises or answers illegally ends it with a
    ``BotFailedError`` naming the bot, its seat, the game and (when it raised) its traceback.
    """
    spec = get_game(game)
    state = spec.new_state(len(names), settings, game_seed)
    log: list[dict[str, Any]] | None = [] if replays is not None else None
    try:
        play_game(state, players, log)
    except ActionError as exc:
        raise BotFailedError(f"bot {names[exc.seat]!r} (seat {exc.seat}) answered illegally "
                             f"in {spec.title} game {index}: {exc}") from None
    except BotRaisedError as exc:
        seat = next((s for s, p in enumerate(players) if p is exc.bot), None)
        where = "" if seat is None else f" (seat {seat})"
        raise BotFailedError(f"bot {exc.spec!r}{where} raised in {spec.title} game {index}: "
                             f"{exc}", detail=exc.detail) from None
    totals, ranks = state.result()
    if replays is not None and log is not None:
        replay = build_replay(state, match_id=match_id, seat_names=names, events=log)
        replays.mkdir(parents=True, exist_ok=True)
        (replays / f"{replay['match_id']}.json").write_text(dumps(replay))
    return GameOutcome(index, names, totals, ranks, _round_scores(state))


def _round_scores(state: AnyGameState) -> tuple[tuple[int, ...], ...]:
    return tuple(state.round_scores())


def _play_range(args: tuple[ArenaConfig, int, int]) -> list[GameOutcome]:
    config, start, stop = args
    return [play_one(config, i) for i in range(start, stop)]


def run(config: ArenaConfig, workers: int = 1,
        progress: Callable[[int, int], None] | None = None) -> list[GameOutcome]:
    """Play every game of ``config``, over ``workers`` processes; outcomes in game order."""
    config = resolved(config)
    for name in config.bots:
        make_bot(name, get_game(config.game).id)
    ranges = [(config, start, stop) for start, stop in game_ranges(config.games, workers)]
    return run_ranges(_play_range, ranges, config.games, workers, progress)


def game_ranges(games: int, workers: int) -> list[tuple[int, int]]:
    """The (start, stop) ranges a run of ``games`` hands out, in order: at most 250 games and
    an eighth of a worker's share each (progress is reported after each range); over several
    workers the last ones shrink to a quarter of each worker's share of what is left, down to
    4 games, so the workers finish within a few games of each other."""
    size = max(1, min(250, games // (workers * 8)))
    bounds = []
    start = 0
    while start < games:
        left = games - start
        step = size if workers <= 1 else min(size, max(left // (workers * 4), 4))
        bounds.append((start, min(start + step, games)))
        start += step
    return bounds


def worker_context() -> Any:
    """How worker processes start: forked (about 0.4 s sooner each on this machine's two
    cores, which decides the scaling of short runs) when that is safe, that is, on a platform
    with ``fork``, with this process single-threaded and no gRPC loaded; spawned otherwise.
    Game i's result depends on (seed, i) alone, so both play the same games."""
    if ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and "grpc" not in sys.modules):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def run_ranges(play_range: Callable[[Any], list[T]], ranges: Sequence[Any], total: int,
               workers: int, progress: Callable[[int, int], None] | None) -> list[T]:
    """Play each range of games with ``play_range``, here or over ``workers`` processes
    (``bullring.sdk.worker_pool``), keeping their order and reporting progress after each;
    return every result."""
    results: list[T] = []
    workers = min(workers, len(ranges))
    with contextlib.ExitStack() as stack:
        if workers <= 1:
            batches: Iterable[list[T]] = map(play_range, ranges)
        else:
            batches = stack.enter_context(contextlib.closing(
                over_workers(worker_context(), play_range, ranges, workers)))
        for batch in batches:
            results.extend(batch)
            if progress:
                progress(len(results), total)
    return results


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's results over an arena run."""

    bot: str
    games: int
    win_share: float
    """Wins over games, a tie for first split between the tied seats."""
    mean_round_score: float
    ci95: float
    """Half-width of the 95% interval of ``mean_round_score``."""
    mean_rank: float


def standings(outcomes: Sequence[GameOutcome]) -> list[BotStanding]:
    """Aggregate outcomes per bot name, best win share first."""
    wins: dict[str, float] = {}
    games: dict[str, int] = {}
    ranks: dict[str, int] = {}
    scores: dict[str, list[int]] = {}
    for outcome in outcomes:
        winners = outcome.ranks.count(1)
        for seat, bot in enumerate(outcome.bots):
            games[bot] = games.get(bot, 0) + 1
            ranks[bot] = ranks.get(bot, 0) + outcome.ranks[seat]
            wins[bot] = wins.get(bot, 0.0) + (1 / winners if outcome.ranks[seat] == 1 else 0)
            scores.setdefault(bot, []).extend(r[seat] for r in outcome.round_scores)
    table = []
    for bot, n in games.items():
        values = scores[bot]
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1)
        table.append(BotStanding(bot, n, wins[bot] / n, mean,
                                 1.96 * math.sqrt(var / len(values)), ranks[bot] / n))
    return sorted(table, key=lambda s: (-s.win_share, s.mean_rank, s.bot))


def format_table(table: Sequence[BotStanding], score_name: str) -> str:
    """Return the standings as an aligned text table."""
    width = max([14, *(len(s.bot) + 2 for s in table)])
    header = f"{'bot':<{width}}{'games':>7}{'win share':>11}{score_name:>24}{'mean rank':>11}"
    lines = [header, "-" * len(header)]
    for s in table:
        score = f"{s.mean_round_score:.2f} ± {s.ci95:.2f}"
        lines.append(f"{s.bot:<{width}}{s.games:>7}{s.win_share:>10.1%}{score:>24}"
                     f"{s.mean_rank:>11.2f}")
    return "\n".join(lines)


def progress_bar(stream: TextIO = sys.stderr) -> Callable[[int, int], None]:
    """Return a callback drawing a one-line progress bar on ``stream``."""
    def draw(done: int, total: int) -> None:
        filled = int(30 * done / total)
        stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} games")
        if done == total:
            stream.write("\n")
        stream.flush()
    return draw


# --------------------------------------------------------------------------- command line


def check_bots(game: str, bots: Sequence[str], settings: Mapping[str, Any],
               option: str = "--bots") -> None:
    """Raise ``ArenaSetupError`` naming ``option`` unless every bot loads and plays ``game`` and
    the table has a seat count the game allows."""
    spec = get_game(game)
    if not spec.min_seats <= len(bots) <= spec.max_seats:
        raise ArenaSetupError(f"{option}: {spec.title} is played by {spec.min_seats} to "
                              f"{spec.max_seats} seats, not {len(bots)}")
    spec.new_state(len(bots), settings, 0)
    for name in dict.fromkeys(bots):
        try:
            make_bot(name, spec.id)
        except UnknownBotError as exc:
            raise ArenaSetupError(f"{option}: {exc}") from None


def overlap_note(a: str, a_mean: float, a_ci: float, b: str, b_mean: float, b_ci: float,
                 suggestion: str) -> str | None:
    """A note when the 95% intervals of ``a`` and ``b`` overlap (the games cannot tell
    them apart), with ``suggestion``; None when they do not."""
    if not (math.isfinite(a_ci) and math.isfinite(b_ci)):
        return None
    if abs(a_mean - b_mean) > a_ci + b_ci:
        return None
    return (f"note: the 95% intervals of {a} and {b} overlap ({a_mean:.2f} ± {a_ci:.2f} vs "
            f"{b_mean:.2f} ± {b_ci:.2f}): these games do not tell them apart. {suggestion}")
