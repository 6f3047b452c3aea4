"""Faults at the moments that matter: a bot killed while it must choose a row, and the
server stopped (SIGTERM) while a trick's cards are revealed but not yet placed."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import grpc

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.replay import verify
from bullring.referee.six_nimmt import BULLHEADS
from bullring.server.store import Store
from tests.seat_client import SeatClient
from tests.serving import ServerProcess, db_url, finish


def _highest_card_until_the_end(seat: SeatClient) -> Any:
    """Drive one seat (highest card, row 0) until the match ends; return the MatchEnded."""
    async def play() -> pb.MatchEnded:
        while True:
            message = await seat.call.read()
            assert isinstance(message, pb.PlayResponse), "the stream ended before the match did"
            kind = message.WhichOneof("body")
            if kind == "match_ended":
                return message.match_ended
            if kind == "decision":
                request = message.decision
                action = (pb.Action(card=max(request.six_nimmt.hand))
                          if request.kind == pb.DECISION_KIND_PLAY_CARD else pb.Action(row=0))
                seat.answer(request.decision_id, action)
    return play()


def test_a_bot_killed_during_its_row_choice(server: ServerProcess) -> None:
    """A bot process killed while its CHOOSE_ROW is pending is marked disconnected, gets the
    default row (fewest bullheads, docs/rules.md §3) at once, and the match completes normally."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "60000", "--seed", "3",
                                "--setting", "rounds=1")

    async def body() -> pb.MatchEnded:
        async with grpc.aio.insecure_channel(server.address) as channel:
            other = SeatClient(channel, str(match.tokens[1]))
            other.join()
            doomed = server.bot(match.tokens[0], "tests.bots.dies_on_row_choice:DiesOnRowChoice")
            ended: pb.MatchEnded = await _highest_card_until_the_end(other)
            (code, out), = await asyncio.to_thread(finish, [doomed])
            assert code == -signal.SIGKILL, out[-2000:]
            other.close()
            return ended

    ended = asyncio.run(body())
    assert ended.termination == pb.TERMINATION_NORMAL
    replay = Store(server.db).replay(match.match_id)
    verify(replay)
    events = replay["events"]
    gone = next(i for i, e in enumerate(events) if e["type"] == "disconnect")
    assert events[gone]["seat"] == 0
    choice = next(e for e in events[gone:] if e["type"] == "answer" and e["seat"] == 0)
    assert choice["kind"] == "CHOOSE_ROW"
    assert choice["default"] and choice["why"] == "disconnected"
    assert not any(e["type"] == "timeout" for e in events), "nobody waited for the dead bot"
    # The default is the cheapest row of the rows the chosen card met.
    (round_,) = replay["rounds"]
    tricks = round_["tricks"]
    t = next(i for i, trick in enumerate(tricks) if trick["row_choice"])
    assert tricks[t]["row_choice"] == {"seat": 0, "row": choice["action"]}
    rows = tricks[t - 1]["rows_after"] if t else round_["rows"]
    cheapest = min(range(4), key=lambda r: (sum(BULLHEADS[c] for c in rows[r]), len(rows[r]), r))
    assert choice["action"] == cheapest


def test_sigterm_during_a_reveal_ends_the_match_cleanly_as_aborted(tmp_path: Path) -> None:
    """SIGTERM while a row choice holds a revealed trick unplaced: the server stores the match
    as aborted with its whole log (a replay that verifies), tells both seats, exits 0."""
    server = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "60000", "--seed", "11")

    async def body() -> list[pb.MatchEnded]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            seats = [SeatClient(channel, str(t)) for t in match.tokens]
            for seat in seats:
                seat.join()
            while True:  # both play their lowest card until the reveal needs a row choice
                requests = [await s.next("decision") for s in seats]
                cards = [min(r.six_nimmt.hand) for r in requests]
                for seat, request, card in zip(seats, requests, cards, strict=True):
                    seat.answer(request.decision_id, pb.Action(card=card))
                ends = [row.cards[-1] for row in requests[0].six_nimmt.rows]
                if min(cards) < min(ends):
                    break
            chooser = seats[cards.index(min(cards))]
            choice = await chooser.next("decision")  # the cards are revealed, not placed
            assert choice.kind == pb.DECISION_KIND_CHOOSE_ROW
            assert server.proc is not None
            server.proc.send_signal(signal.SIGTERM)
            return [await seat.next("match_ended") for seat in seats]

    ended = asyncio.run(body())
    assert server.proc is not None
    _, log = server.proc.communicate(timeout=60)  # the one SIGTERM is enough to stop it
    assert server.proc.returncode == 0, log[-2000:]
    assert [e.termination for e in ended] == [pb.TERMINATION_ABORTED] * 2
    store = Store(server.db)
    assert store.match_config(match.match_id).status == "aborted"
    replay = store.replay(match.match_id)
    verify(replay)
    assert replay["termination"] == "aborted"
    assert replay["events"][-1]["type"] == "match_end"
    # The revealed trick was never placed: no row was chosen, nothing resolved with a choice.
    assert not any(e["type"] == "answer" and e["kind"] == "CHOOSE_ROW" for e in replay["events"])
    assert all(t["row_choice"] is None for t in replay["rounds"][-1]["tricks"])
