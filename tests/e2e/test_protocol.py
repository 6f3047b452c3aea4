"""The wire protocol against a real server: auth, in-band rejections, retries, bad bytes,
health and reflection."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from tests.seat_client import SeatClient
from tests.serving import ServerProcess


def run(coro: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run one async test body."""
    return asyncio.run(coro())


def test_health_serving_and_reflection_lists_services(server: ServerProcess) -> None:
    """The standard health check answers SERVING and reflection lists our services."""
    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=wire.BOT_SERVICE))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            async for response in stub.ServerReflectionInfo(iter([request])):
                names = {s.name for s in response.list_services_response.service}
                assert {wire.BOT_SERVICE, wire.SPECTATOR_SERVICE,
                        "grpc.health.v1.Health"} <= names
    run(body)


def test_every_service_answers_serving(server: ServerProcess) -> None:
    """Each service of the contract (every one referee.proto declares), and the server as a
    whole (""), answers SERVING to the standard health check (grpc.health.v1)."""
    services = [s.full_name for s in pb.DESCRIPTOR.services_by_name.values()]
    assert len(services) >= 5

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for name in ["", *services]:
                reply = await health.Check(health_pb2.HealthCheckRequest(service=name),
                                           timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING, name
    run(body)


def test_wrong_or_missing_token_is_unauthenticated(server: ServerProcess) -> None:
    """A wrong token, or none, gets UNAUTHENTICATED on every BotService method."""
    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = SeatClient(channel, "br_not-a-token")
            client.join()
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await client.next("match_started")
            # grpc.aio may report its own in-flight Join write, lost to the refusal, as
            # INTERNAL (grpc/grpc#36066); the sync client below sees the server's status.
            assert (info.value.code() == grpc.StatusCode.UNAUTHENTICATED
                    or wire.lost_to_own_write(info.value)), info.value
            submit = wire.bot_stub(channel)["SubmitAnswer"]
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await submit(pb.SubmitAnswerRequest())
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    run(body)
    join = pb.PlayRequest(join=pb.Join(client="test")).SerializeToString()
    with grpc.insecure_channel(server.address) as channel:
        play: grpc.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(wire.PLAY)
        for metadata in ((), (("authorization", "Bearer br_not-a-token"),)):
            with pytest.raises(grpc.RpcError) as sync_info:
                for _ in play(iter([join]), metadata=metadata):
                    pass
            assert sync_info.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def next_card_decision(seat: SeatClient) -> Any:
    """The seat's next PLAY_CARD decision, answering any row choice before it with row 0."""
    while True:
        decision = await seat.next("decision")
        if decision.kind != pb.DECISION_KIND_CHOOSE_ROW:
            return decision
        seat.answer(decision.decision_id, pb.Action(row=0))


def test_rejections_retries_and_duplicates(server: ServerProcess) -> None:
    """An illegal answer is rejected in-band and a correct retry is accepted; a duplicate is
    accepted once and not counted twice; another seat's decision id is not pending."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "20000")

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            a, b = (SeatClient(channel, t) for t in match.tokens if t)
            a.join()
            b.join()
            started = await a.next("match_started")
            assert started.seat == 0 and started.game == "six_nimmt"
            req_a = await a.next("decision")
            req_b = await b.next("decision")
            hand = list(req_a.six_nimmt.hand)
            assert [x.card for x in req_a.legal] == hand
            assert not set(hand) & set(req_b.six_nimmt.hand)
            a.answer(req_a.decision_id, pb.Action(card=105))
            rejected = await a.next("rejected")
            assert rejected.reason == pb.REJECT_REASON_ILLEGAL_ACTION
            a.answer(req_a.decision_id, pb.Action(word="take"))
            assert (await a.next("rejected")).reason == pb.REJECT_REASON_MALFORMED_ACTION
            a.answer(req_b.decision_id, pb.Action(card=req_b.six_nimmt.hand[0]))
            assert (await a.next("rejected")).reason == pb.REJECT_REASON_NOT_PENDING
            a.answer(req_a.decision_id, pb.Action(card=hand[0]))
            assert (await a.next("accepted")).decision_id == req_a.decision_id
            a.answer(req_a.decision_id, pb.Action(card=hand[1]))
            assert (await a.next("accepted")).decision_id == req_a.decision_id
            b.answer(req_b.decision_id, pb.Action(card=req_b.six_nimmt.hand[0]))
            await b.next("accepted")
            revealed = await a.next("event")
            assert revealed.six_nimmt.WhichOneof("event") == "cards_revealed"
            assert revealed.six_nimmt.cards_revealed.plays[0] == hand[0]
            # Either seat may have to choose a row first (the deal is fresh each run): it
            # answers at once rather than leaving the match to its 20 s deadline.
            nxt, _ = await asyncio.gather(next_card_decision(a), next_card_decision(b))
            assert len(nxt.six_nimmt.hand) == 9 and hand[0] not in nxt.six_nimmt.hand
            assert hand[1] in nxt.six_nimmt.hand
            for c in (a, b):
                c.close()
                c.call.cancel()
    run(body)


def test_malformed_and_oversized_messages(server: ServerProcess) -> None:
    """Garbage bytes get INVALID_ARGUMENT, an oversized message RESOURCE_EXHAUSTED, and the
    other match on the server goes on."""
    other = server.create_match("no_thanks", 3, "--house", "1=never_take", "--house",
                                "2=threshold", "--deadline-ms", "20000")
    bad = server.create_match("six_nimmt", 2)
    token = bad.tokens[0]
    assert token is not None

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address,
                                             options=[("grpc.max_send_message_length",
                                                       1 << 22)]) as channel:
            live = SeatClient(channel, str(other.tokens[0]))
            live.join()
            await live.next("decision")
            metadata = [("authorization", f"Bearer {token}")]
            raw: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = \
                channel.stream_stream(wire.PLAY)
            call = raw(iter([b"\xff\xff\xff\xff garbage"]), metadata=metadata)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                async for _ in call:
                    pass
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            submit: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = \
                channel.unary_unary(wire.SUBMIT_ANSWER)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await submit(b"\x0a" + b"\xff" * 8, metadata=metadata)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            huge = pb.SubmitAnswerRequest(answer=pb.Answer(decision_id="x" * 200_000))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await submit(huge.SerializeToString(), metadata=metadata)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            decision = next(m.decision for m in reversed(live.seen)
                            if m.WhichOneof("body") == "decision")
            live.answer(decision.decision_id, pb.Action(word="take"))
            assert (await live.next("accepted")).decision_id == decision.decision_id
            live.close()
            live.call.cancel()
    run(body)


def test_refused_raw_bytes_get_the_status_the_server_sent(server: ServerProcess) -> None:
    """Random bytes as a Play stream's first message, with no token, an unknown one or a
    seat's: the server answers UNAUTHENTICATED or INVALID_ARGUMENT, never INTERNAL, as grpc's
    sync client reports it. grpc's asyncio client sometimes reports its own write, lost to a
    refusal that came first, as INTERNAL (grpc/grpc#36066, the soak's one INTERNAL), and only
    ever in the form ``wire.lost_to_own_write`` recognises."""
    seat = server.create_match("six_nimmt", 2).tokens[0]
    expected = {None: grpc.StatusCode.UNAUTHENTICATED,
                "bot_nonsense": grpc.StatusCode.UNAUTHENTICATED,
                seat: grpc.StatusCode.INVALID_ARGUMENT}
    rng = random.Random(7)
    calls = [(rng.randbytes(rng.randrange(0, 200)) + b"\xff\xff\xff", rng.choice(list(expected)))
             for _ in range(450)]

    def metadata(token: str | None) -> tuple[tuple[str, str], ...]:
        return () if token is None else (("authorization", f"Bearer {token}"),)

    with grpc.insecure_channel(server.address) as channel:
        play: grpc.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(wire.PLAY)
        for raw, token in calls:
            with pytest.raises(grpc.RpcError) as sync_info:
                for _ in play(iter([raw]), metadata=metadata(token)):
                    pass
            assert sync_info.value.code() == expected[token], (raw, token)

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            play: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = \
                channel.stream_stream(wire.PLAY)
            for raw, token in calls:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    async for _ in play(iter([raw]), metadata=metadata(token)):
                        pass
                assert (info.value.code() == expected[token]
                        or wire.lost_to_own_write(info.value)), info.value
    run(body)


def test_a_token_cannot_act_in_another_match(server: ServerProcess) -> None:
    """A seat's token answering another match's pending decision is rejected as not pending
    (a decision id names no decision outside the token's own match), and that other match's
    seat can still answer it."""
    first = server.create_match("six_nimmt", 2, "--house", "1=random", "--deadline-ms", "20000")
    second = server.create_match("six_nimmt", 2, "--house", "1=random", "--deadline-ms", "20000")

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            mine, theirs = SeatClient(channel, str(first.tokens[0])), SeatClient(
                channel, str(second.tokens[0]))
            mine.join()
            theirs.join()
            await mine.next("decision")
            target = await theirs.next("decision")
            submit = wire.bot_stub(channel)["SubmitAnswer"]
            verdict = await submit(
                pb.SubmitAnswerRequest(answer=pb.Answer(decision_id=target.decision_id,
                                                        action=target.legal[0])),
                metadata=[("authorization", f"Bearer {first.tokens[0]}")])
            assert verdict.WhichOneof("verdict") == "rejected"
            assert verdict.rejected.reason == pb.REJECT_REASON_NOT_PENDING
            theirs.answer(target.decision_id, target.legal[0])
            assert (await theirs.next("accepted")).decision_id == target.decision_id
            for c in (mine, theirs):
                c.close()
                c.call.cancel()
    run(body)


@pytest.mark.parametrize("batches", [False, True], ids=["single", "batched"])
def test_after_an_answer_come_its_verdict_the_events_and_the_next_request(
        server: ServerProcess, batches: bool) -> None:
    """After each answer a seat gets its verdict, then the public events, then its next
    request, in that order. A client that set accept_batches gets them packed into batches
    (never nested), one message per answer, even when a house bot's row choice comes
    between two of its requests; one that did not never gets a batch."""
    # Five rounds, fixed: the default end (a total of 66) may come after three, before the
    # 41 requests the seat reads.
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "20000", "--house",
                                "1=random", "--setting", "rounds=5")

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = SeatClient(channel, str(match.tokens[0]), batches)
            client.join()
            await client.next("match_started")
            request = await client.next("decision")
            responses = []
            for _ in range(40):  # four rounds: the house bot chooses a row in some tricks
                client.answer(request.decision_id, request.legal[0])
                verdict_at, read_at = len(client.seen), len(client.received)
                request = await client.next("decision")
                between = [m.WhichOneof("body") for m in client.seen[verdict_at:-1]]
                assert between[0] == "accepted" and set(between[1:]) <= {"event"}, between
                assert client.seen[verdict_at].accepted.decision_id != request.decision_id
                responses.append(len(client.received) - read_at)
            client.close()
            packed = [r for r in client.received if r.WhichOneof("body") == "batch"]
            if batches:
                assert responses == [1] * len(responses)
                assert packed
                assert all(m.WhichOneof("body") != "batch"
                           for r in packed for m in r.batch.messages)
            else:
                assert not packed
    run(body)
