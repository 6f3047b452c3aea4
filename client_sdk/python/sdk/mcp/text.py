"""The plain words ``bullring mcp`` tells an agent: a decision, the match so far, the rules."""

from __future__ import annotations

from typing import Any

from bullring.sdk.mcp.seat import MatchRecord, Pending, jsonable

ANSWERS = {
    "PLAY_CARD": "a card number from your hand",
    "CHOOSE_ROW": "the index (0-3) of the row you take",
    "DRAFT_CARD": "a card number from the pool",
    "TAKE_OR_PASS": '"take" (the card and its chips) or "pass" (put one chip on it)',
    "REVEAL_HIDDEN_CARD": '"reveal" (add your hidden card to your face-up cards) or "keep"',
}
"""What an answer to each decision kind is, in words."""

RULES = {
    "six_nimmt": """\
6 nimmt! (game six_nimmt). Cards 1-104; each card carries bullheads (penalty points):
55 has 7, other repdigits (11, 22, ...) 5, other multiples of 10 have 3, other multiples
of 5 have 2, every other card 1. Each round deals 10 cards to each seat and starts 4 rows
with one face-up card each.
Each trick every seat plays one card at the same time (PLAY_CARD). The cards are placed
lowest first: a card follows the row whose last card is the closest below it. A sixth card
in a row takes the row's 5 cards as penalty and starts the row anew. A card lower than
every row's last card makes its seat choose a row (CHOOSE_ROW): it takes that row and
starts it anew. After 10 tricks the round ends; the game ends after the round in which a
seat reaches 66 bullheads (a match setting may fix the number of rounds instead).
Fewest bullheads wins. A seat knows its own hand, the rows, every revealed card and every
seat's penalties; never another seat's hand.""",
    "no_thanks": """\
No Thanks! (game no_thanks). Cards 3-35; 9 are removed unseen, 24 form the deck. Each
seat has chips (11 with 3-5 seats), hidden from the others. A card is turned up; the
seat to play decides (TAKE_OR_PASS): "pass" puts one of its chips on the card and the
turn moves on (a seat with no chips must take); "take" takes the card and all chips on
it, turns up the next card and decides again. When the deck is empty the round ends.
Score: the sum of your cards, where a run of consecutive cards counts only its lowest
card, minus your chips. Lowest score wins.""",
}
"""A summary of each game's rules (the full rule book is docs/rules.md)."""

COMMON = """\
Every decision has a deadline. No answer in time: the server plays a default action for
you (a seeded random card, the row with fewest bullheads, pass if you have a chip). An
illegal answer is refused with the reason; answer again before the deadline. A match
setting may give each seat a time bank spent only when it answers late."""


def rules(game: str) -> str:
    """The rules summary of ``game`` (or of both games for "")."""
    games = [game] if game else list(RULES)
    return "\n\n".join([*(RULES[g] for g in games), COMMON])


def describe_decision(p: Pending, match: MatchRecord | None) -> str:
    """A decision in plain words: the situation, what to answer, the time left."""
    o = p.observation
    where = f"match {match.match_id} ({match.game}), " if match is not None else ""
    lines = [f"Decision {p.decision_id}: {p.kind} in {where}you are seat {o.seat}, "
             f"round {o.round}."]
    if hasattr(o, "hand"):
        lines += [f"Your hand: {list(o.hand)}."]
        lines += [f"Row {i}: {list(r)}" for i, r in enumerate(o.rows)]
        if o.trick_plays:
            lines.append(f"Cards played this trick (by seat): {list(o.trick_plays)}.")
        if o.pool:
            lines.append(f"Draft pool: {list(o.pool)}.")
        lines.append(f"Penalty totals by seat: {list(o.totals)}; this round: "
                     f"{list(o.penalties)}.")
    else:
        lines.append(f"Face-up card: {o.card} with {o.pot} chips on it; {o.deck_left} cards "
                     f"left in the deck. Your chips: {o.chips}.")
        if o.hidden_card is not None:
            lines.append(f"Your hidden card: {o.hidden_card}.")
        lines += [f"Seat {i}'s cards: {list(c)}" for i, c in enumerate(o.cards)]
        lines.append(f"Totals by seat: {list(o.totals)}.")
    lines.append(f"Answer with {ANSWERS.get(p.kind, 'one of the legal actions')}: one of "
                 f"{p.legal()}. Time left: {p.time_left_ms()} ms.")
    return "\n".join(lines)


def decision_content(p: Pending, match: MatchRecord | None) -> dict[str, Any]:
    """A decision as structured content."""
    return {"status": "decision", "decision_id": p.decision_id, "kind": p.kind,
            "legal": p.legal(), "time_left_ms": p.time_left_ms(),
            "match_id": match.match_id if match else "", "game": match.game if match else "",
            "observation": jsonable(p.observation)}


def describe_match(match: MatchRecord | None) -> str:
    """The match so far in plain words: seats, public events, result."""
    if match is None:
        return "No match has started yet."
    lines = [f"Match {match.match_id}, {match.game}, {'rated' if match.rated else 'unrated'}; "
             f"you are seat {match.seat} of {match.seat_names}."]
    for event in match.events:
        fields = ", ".join(f"{k}={v}" for k, v in event.items() if k != "event")
        lines.append(f"{event['event']}: {fields}")
    if match.result is not None:
        lines.append(f"Ended: totals {match.result['totals']}, ranks {match.result['ranks']} "
                     f"({match.result['termination']}).")
    return "\n".join(lines)


def match_content(match: MatchRecord | None) -> dict[str, Any]:
    """The match so far as structured content."""
    if match is None:
        return {"match_id": "", "events": []}
    return {"match_id": match.match_id, "game": match.game, "seat": match.seat,
            "seat_names": match.seat_names, "rated": match.rated, "events": match.events,
            "result": match.result}
