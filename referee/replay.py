"""Replays in the public format ``bullring.replay/1`` (docs/replay-format.md): write, verify.

A replay is the config, the seed and the answers. Verifying replays the answers through
the engine and compares every round record, total and rank with the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from bullring.referee.core import RefereeError
from bullring.referee.registry import AnyGameState, RoundPlan, get_game

FORMAT = "bullring.replay/1"
"""The format string this module writes and reads."""

ANSWER = "answer"
"""The log event type of an answer that was applied (from the bot or by default)."""


class ReplayError(RefereeError):
    """A replay file cannot be read, or does not match what its answers produce."""


def answer_event(state: AnyGameState, seat: int, action: int | str, *,
                 default: bool = False, comment: str = "") -> dict[str, Any]:
    """Return the log event for ``action`` answering ``seat``'s pending decision; a
    non-empty ``comment`` (the bot's own words on it) is kept as ``comment``."""
    kind = state.pending[seat].kind
    event: dict[str, Any] = {"type": ANSWER, "step": state.step, "seat": seat, "kind": str(kind),
                             "action": action if isinstance(action, int) else str(action),
                             "default": default}
    if comment:
        event["comment"] = comment
    return event


def build_replay(state: AnyGameState, *, match_id: str, seat_names: Sequence[str],
                 events: list[dict[str, Any]], termination: str = "normal",
                 rated: bool | None = None, humans: Collection[int] = ()) -> dict[str, Any]:
    """Return the replay of ``state``'s match, with ``events`` as its full log; with
    ``rated`` (a server's match), whether its end updates ratings; each seat of ``humans``
    is marked as a person's (``"human": true``)."""
    totals, ranks = state.result()
    replay: dict[str, Any] = {
        "format": FORMAT,
        "match_id": match_id,
        "game": state.game,
        "settings": dict(state.settings),
        "seed": state.seed,
        "seats": [{"name": name, **({"human": True} if seat in humans else {})}
                  for seat, name in enumerate(seat_names)],
        "rounds": state.replay_rounds(),
        "totals": list(totals),
        "ranks": list(ranks),
        "termination": termination,
        "events": events,
    }
    if rated is not None:
        replay["rated"] = rated
    return replay


FROM_LOG = "its match log"
FROM_ROUNDS = "its rounds alone (it has no match log)"
"""What ``verify`` checked a replay from."""


def verify(replay: dict[str, Any]) -> str:
    """Replay ``replay``'s answers through the engine; raise ReplayError at the first mismatch.

    A replay whose match log holds no answer (one recorded by another program, say) is
    checked from its rounds alone: each round is dealt as the replay says and played as
    its rounds say, every play must be legal, and every resulting record, total and rank
    must match. Returns what was checked: ``FROM_LOG`` or ``FROM_ROUNDS``."""
    if not isinstance(replay, dict):
        raise ReplayError("a replay must be a JSON object")
    if replay.get("format") != FORMAT:
        raise ReplayError(f"unknown replay format {replay.get('format')!r}; "
                          f"this reader knows {FORMAT!r}")
    for field in ("match_id", "game", "settings", "seed", "seats", "rounds", "totals",
                  "ranks", "termination", "events"):
        if field not in replay:
            raise ReplayError(f"replay lacks the required field {field!r}")
    spec = get_game(str(replay["game"]))
    events, rounds = replay["events"], replay["rounds"]
    if not isinstance(events, list) or not isinstance(rounds, list):
        raise ReplayError("events and rounds must be lists")
    from_log = any(isinstance(e, dict) and e.get("type") == ANSWER for e in events)
    reader = spec.replay_from_rounds
    if not from_log and reader is None:
        raise ReplayError(f"the match log holds no answer, and {spec.id} replays cannot be "
                          f"checked from their rounds alone")
    try:
        if from_log or reader is None:
            state = spec.new_state(len(replay["seats"]), replay["settings"],
                                   int(replay["seed"]))
        else:
            state = reader.dealt_state(len(replay["seats"]), replay["settings"],
                                       int(replay["seed"]), [reader.deal(r) for r in rounds])
    except RefereeError as exc:
        raise ReplayError(f"settings: {exc}") from exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReplayError(f"rounds: not a deal this reader understands ({exc!r})") from exc
    if from_log or reader is None:
        _replay_answers(state, events)
        _check_time_bank(state.settings, events, len(replay["seats"]))
    else:
        _replay_rounds(state, rounds, reader.plan)
    termination = replay["termination"]
    if termination == "normal" and not state.over:
        raise ReplayError("termination is 'normal' but the answers do not finish the game")
    if state.over and termination != "normal":
        raise ReplayError(f"the answers finish the game but termination is {termination!r}")
    _compare("rounds", state.replay_rounds(), replay["rounds"])
    if state.over:
        totals, ranks = state.result()
        _compare("totals", list(totals), replay["totals"])
        _compare("ranks", list(ranks), replay["ranks"])
    return FROM_LOG if from_log else FROM_ROUNDS


def _replay_rounds(state: AnyGameState, rounds: list[Any],
                   plan: Callable[[Mapping[str, Any]], RoundPlan]) -> None:
    """Play the answers the round records give, as the game's ``plan`` reads them; raise
    ReplayError naming the first that does not fit."""
    for r, record in enumerate(rounds):
        try:
            steps = plan(record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ReplayError(f"rounds[{r}]: not a round this reader understands "
                              f"({exc!r})") from exc
        for where, answers in steps:
            path = f"rounds[{r}].{where}"
            if state.over or answers.keys() != state.pending.keys():
                raise ReplayError(f"{path}: seats {sorted(answers)} answer, but the rules ask "
                                  f"{sorted(state.pending)}")
            try:
                for seat, action in answers.items():
                    state.validate(seat, action)
                state.apply(answers)
            except RefereeError as exc:
                raise ReplayError(f"{path}: {exc}") from exc


def public_events(replay: dict[str, Any]) -> list[Any]:
    """The public events of a stored match, in the order its spectators saw them live: the
    opening, then those of every decision point its answers resolved (``verify`` checks a
    replay; this only re-plays it). Raises ReplayError if the answers do not fit the game."""
    spec = get_game(str(replay["game"]))
    try:
        state = spec.new_state(len(replay["seats"]), replay["settings"], int(replay["seed"]))
    except RefereeError as exc:
        raise ReplayError(f"settings: {exc}") from exc
    events = list(state.opening)
    _replay_answers(state, replay["events"], events, partial_ok=True)
    return events


def _replay_answers(state: AnyGameState, events: list[dict[str, Any]],
                    published: list[Any] | None = None, partial_ok: bool = False) -> None:
    """Apply the logged answers, a decision point at a time; the engine's events go to
    ``published``. Answers left waiting for other seats at the end (an aborted match) are an
    error unless ``partial_ok``."""
    batch: dict[int, int | str] = {}
    for index, event in enumerate(events):
        if event.get("type") != ANSWER:
            continue
        where = f"events[{index}]"
        seat = event.get("seat")
        if state.over or seat not in state.pending:
            raise ReplayError(f"{where}: seat {seat!r} answers but has no decision pending")
        if event.get("step") != state.step:
            raise ReplayError(f"{where}: step is {event.get('step')!r}, the engine is at "
                              f"step {state.step}")
        action = event.get("action")
        if event.get("default"):
            expected = state.default_action(seat)
            if expected != action:
                raise ReplayError(f"{where}: default action is {action!r}, the rules give "
                                  f"{expected!r}")
        try:
            state.validate(seat, action)  # type: ignore[arg-type]
        except RefereeError as exc:
            raise ReplayError(f"{where}: {exc}") from exc
        batch[seat] = action  # type: ignore[assignment]
        if batch.keys() == state.pending.keys():
            applied = state.apply(batch)
            if published is not None:
                published.extend(applied)
            batch = {}
    if batch and not partial_ok:
        raise ReplayError(f"the log ends with answers {batch} still waiting for other seats")


def _check_time_bank(settings: dict[str, Any], events: list[dict[str, Any]],
                     seats: int) -> None:
    """Recompute each seat's time bank (``time_bank_ms``) from the log: an answer spends
    what it took (``ms``) beyond the deadline and the server's own lateness
    (``server_late_ms``), a timeout what was left; every such entry must say what it spent
    and what is left (``bank_spent_ms``, ``bank_left_ms``) as the recomputation does."""
    bank_ms = int(settings.get("time_bank_ms") or 0)
    if bank_ms <= 0:
        return
    deadline_ms = float(settings["deadline_ms"])
    left = [float(bank_ms)] * seats
    for index, event in enumerate(events):
        timed_answer = event.get("type") == ANSWER and "ms" in event
        if not timed_answer and event.get("type") != "timeout":
            continue
        seat = event.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < seats:
            raise ReplayError(f"events[{index}]: no such seat {seat!r}")
        if timed_answer:
            over = float(event["ms"]) - deadline_ms - float(event.get("server_late_ms", 0))
            spent = round(min(max(0.0, over), left[seat]), 3)
        else:
            spent = round(left[seat], 3)
        left[seat] = round(left[seat] - spent, 3)
        logged = (event.get("bank_spent_ms"), event.get("bank_left_ms"))
        if logged != (spent, left[seat]):
            raise ReplayError(f"events[{index}]: seat {seat}'s time bank: the log says spent "
                              f"{logged[0]!r}, left {logged[1]!r}; the answers' times give "
                              f"spent {spent!r}, left {left[seat]!r}")


def _compare(path: str, ours: Any, theirs: Any) -> None:
    """Raise ReplayError naming the first path where ``ours`` and ``theirs`` differ."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in ours:
            if key not in theirs:
                raise ReplayError(f"{path}.{key}: missing from the replay")
            _compare(f"{path}.{key}", ours[key], theirs[key])
        return
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            raise ReplayError(f"{path}: the replay has {len(theirs)} entries, "
                              f"the answers give {len(ours)}")
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _compare(f"{path}[{i}]", a, b)
        return
    if ours != theirs:
        raise ReplayError(f"{path}: the replay says {theirs!r}, the answers give {ours!r}")


def dumps(replay: dict[str, Any]) -> str:
    """Return ``replay`` as compact JSON text, the form written to ``<match_id>.json``."""
    return json.dumps(replay, separators=(",", ":"))


def loads(text: str, *, lines: bool = False) -> list[dict[str, Any]]:
    """Parse one replay, or with ``lines`` one replay per line (JSON Lines)."""
    chunks = [line for line in text.splitlines() if line.strip()] if lines else [text]
    try:
        return [json.loads(chunk) for chunk in chunks]
    except json.JSONDecodeError as exc:
        raise ReplayError(f"not valid JSON: {exc}") from exc
