"""Replays in the public format ``bullring.replay/1`` (docs/replay-format.md): write, verify.

A replay is the config, the seed and the answers. Verifying replays the answers through
the engine and compares every round record, total and rank with the file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from referee.core import RefereeError
from referee.registry import GameState, get_game

FORMAT = "bullring.replay/1"
"""The format string this module writes and reads."""

ANSWER = "answer"
"""The log event type of an answer that was applied (from the bot or by default)."""


class ReplayError(RefereeError):
    """A replay file cannot be read, or does not match what its answers produce."""


def answer_event(state: GameState, seat: int, action: int | str, *,
                 default: bool = False) -> dict[str, Any]:
    """Return the log event for ``action`` answering ``seat``'s pending decision."""
    kind = state.pending[seat].kind
    return {"type": ANSWER, "step": state.step, "seat": seat, "kind": str(kind),
            "action": action if isinstance(action, int) else str(action), "default": default}


def build_replay(state: GameState, *, match_id: str, seat_names: Sequence[str],
                 events: list[dict[str, Any]], termination: str = "normal") -> dict[str, Any]:
    """Return the replay of ``state``'s match, with ``events`` as its full log."""
    totals, ranks = state.result()
    return {
        "format": FORMAT,
        "match_id": match_id,
        "game": state.game,
        "settings": dict(state.settings),
        "seed": state.seed,
        "seats": [{"name": name} for name in seat_names],
        "rounds": state.replay_rounds(),
        "totals": list(totals),
        "ranks": list(ranks),
        "termination": termination,
        "events": events,
    }


def verify(replay: dict[str, Any]) -> None:
    """Replay ``replay``'s answers through the engine; raise ReplayError at the first mismatch."""
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
    try:
        state = spec.new_state(len(replay["seats"]), replay["settings"], int(replay["seed"]))
    except RefereeError as exc:
        raise ReplayError(f"settings: {exc}") from exc
    _replay_answers(state, replay["events"])
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


def _replay_answers(state: GameState, events: list[dict[str, Any]],
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
