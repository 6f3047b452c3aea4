"""Secrets on the wire: every message a seat or a spectator got in real matches is checked
against the stored replay for facts the rules hide (docs/rules.md §4)."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import grpc
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from tests.seat_client import SeatClient
from tests.serving import Match, ServerProcess

PUBLIC_EVENTS = {"CardsRevealed", "TrickResolved", "CardDrafted", "RoundStarted", "RoundEnded",
                 "GameEnded", "CardTurnedUp", "Passed", "Took", "HiddenRevealed"}


async def record_match(server: ServerProcess, game: str, seats: int, *args: str,
                       batches: bool = False
                       ) -> tuple[Match, list[list[pb.PlayResponse]], list[pb.WatchResponse]]:
    """Play a match with random answers from test-driven seats, recording every message
    each seat (batches unpacked, if ``batches`` asks for them) and one spectator received."""
    match = server.create_match(game, seats, "--deadline-ms", "20000", *args)
    async with grpc.aio.insecure_channel(server.address) as channel:
        clients = [SeatClient(channel, str(t), batches) for t in match.tokens]
        for client in clients:
            client.join()
        await clients[0].next("match_started")
        watched: list[pb.WatchResponse] = []

        async def spectate() -> None:
            async for message in wire.watch_stub(channel)(pb.WatchRequest(
                    match_id=match.match_id)):
                watched.append(message)

        async def seat(client: SeatClient, rng: random.Random) -> None:
            while True:
                message = await client.read()
                if message is None:
                    return
                if message.WhichOneof("body") == "decision":
                    request = message.decision
                    client.answer(request.decision_id, rng.choice(list(request.legal)))
                if message.WhichOneof("body") == "match_ended":
                    client.close()
                    return

        spectator = asyncio.create_task(spectate())
        await asyncio.gather(*(seat(c, random.Random(i)) for i, c in enumerate(clients)))
        await asyncio.wait_for(spectator, 30)
    return match, [c.seen for c in clients], watched


def check_six_nimmt_seats(replay: dict[str, Any], seen: list[list[pb.PlayResponse]]) -> int:
    """Assert no message to a seat carries a card another seat still holds (its hand, or
    its choice before the reveal); return how many decision requests were checked."""
    seats = len(replay["seats"])
    requests = 0
    for seat, messages in enumerate(seen):
        for message in messages:
            kind = message.WhichOneof("body")
            if kind == "event":
                event = wire.event_from_proto(message.event)
                assert type(event).__name__ in PUBLIC_EVENTS and "hand" not in event._fields
            if kind != "decision":
                continue
            requests += 1
            o = message.decision.six_nimmt
            round_ = replay["rounds"][o.round]
            played = [t["plays"] for t in round_["tricks"][:o.trick]]
            if o.trick_plays.cards:
                played.append(list(o.trick_plays.cards))
            held = {other: set(round_["hands"][other]) - {p[other] for p in played}
                    for other in range(seats)}
            assert set(o.hand) == held[seat]
            shown = set(o.hand) | set(o.pool) | {c for r in o.rows for c in r.cards} | \
                {c for p in o.piles for c in p.cards} | \
                {c for t in o.revealed for c in t.cards} | set(o.trick_plays.cards) | \
                {a.card for a in message.decision.legal}
            for other in range(seats):
                if other != seat:
                    assert not shown & held[other], (seat, other, shown & held[other])
    return requests


def check_spectator(watched: list[pb.WatchResponse]) -> None:
    """Assert a spectator got only public events, then the end."""
    assert watched and watched[-1].WhichOneof("body") == "match_ended"
    for message in watched[:-1]:
        event = wire.event_from_proto(message.event)
        assert type(event).__name__ in PUBLIC_EVENTS and "hand" not in event._fields


def secret_free(payload: dict[str, Any]) -> None:
    """Assert a No Thanks! public payload names no chip count, hidden or removed card."""
    assert not {"chips", "hidden", "hidden_card", "removed", "deck"} & set(payload)


def check_no_thanks_seats(replay: dict[str, Any], seen: list[list[pb.PlayResponse]]) -> None:
    """Assert a seat sees its own chips and hidden card only, and nobody sees the removed
    cards before the end."""
    seats = len(replay["seats"])
    round_ = replay["rounds"][0]
    hidden = round_["hidden"]
    never_dealt = set(round_["removed"]) - set(hidden)
    for seat, messages in enumerate(seen):
        for message in messages:
            kind = message.WhichOneof("body")
            if kind == "event":
                secret_free(wire.event_from_proto(message.event)._asdict())
            if kind != "decision":
                continue
            o = message.decision.no_thanks
            assert o.hidden_card in (0, hidden[seat])
            shown = {o.card} | {c for cards in o.cards for c in cards.cards} | \
                {t.card for t in o.history}
            assert not shown & never_dealt
            others_hidden = {hidden[s] for s in range(seats) if s != seat}
            revealed = {t.card for t in o.history if t.action == "reveal_hidden"}
            assert not (shown & others_hidden) - revealed


@pytest.mark.parametrize("batches", [False, True], ids=["single", "batched"])
def test_six_nimmt_streams_hold_no_other_hand_or_choice(server: ServerProcess,
                                                        batches: bool) -> None:
    """No request to a seat carries a card another seat still holds (its hand, or its choice
    before the reveal), whether messages come one by one or in batches; spectators get
    only public events; the server's log names no token or hand."""
    match, seen, watched = asyncio.run(record_match(server, "six_nimmt", 3, batches=batches))
    replay = json.loads(server.replay(match.match_id))
    assert check_six_nimmt_seats(replay, seen) > 30
    check_spectator(watched)
    check_log(server.stop(), match, [hand for r in replay["rounds"] for hand in r["hands"]])


def check_log(log: str, match: Match, secrets: list[list[int]]) -> None:
    """Assert the server's log names the match's result but no seat's token, nor any of
    ``secrets`` (card lists the rules hide, such as a hand), in dealt or sorted order."""
    assert f"match {match.match_id} normal: totals" in log
    for token in match.tokens:
        assert token and token not in log
    for cards in secrets:
        assert len(cards) > 1
        assert str(cards)[1:-1] not in log and str(sorted(cards))[1:-1] not in log


def test_no_thanks_streams_hold_no_chips_hidden_or_removed_card(server: ServerProcess
                                                                ) -> None:
    """A seat sees its own chips and hidden card only; nobody sees the removed cards before
    the end; spectators never see chips or hidden cards; the server's log names no token,
    removed cards, deck order or hidden cards."""
    match, seen, watched = asyncio.run(record_match(server, "no_thanks", 4, "--setting",
                                                    "hidden_card=true"))
    replay = json.loads(server.replay(match.match_id))
    check_no_thanks_seats(replay, seen)
    for message in watched:
        if message.WhichOneof("body") == "event":
            secret_free(wire.event_from_proto(message.event)._asdict())
    check_log(server.stop(), match, [cards for r in replay["rounds"]
                                     for cards in (r["removed"], r["deck"], r["hidden"])])
