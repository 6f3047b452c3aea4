"""Property-based fuzzing of the gRPC surface of a real server.

Hypothesis draws protobuf messages (PlayRequest, Answer, Action, SubmitAnswerRequest,
SubscribeRequest, WatchRequest) and raw bytes, and a seat with a valid token sends them to a
``bullring serve`` process. Whatever arrives, the server must not crash, must stay SERVING,
must answer bad input with INVALID_ARGUMENT, RESOURCE_EXHAUSTED, NOT_FOUND or an in-band
rejection (never UNKNOWN or INTERNAL), and the match must still finish with a replay that
verifies. The CI profile keeps the run short; ``BULLRING_FUZZ_PROFILE=deep`` runs long.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee import replay
from tests.serving import ServerProcess, db_url, finish

settings.register_profile("fuzz-ci", max_examples=40, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings.get_profile(os.environ.get("BULLRING_FUZZ_PROFILE", "fuzz-ci"))
"""The settings of every fuzz test here (not loaded globally, so other tests keep theirs)."""

WAIT_S = 20.0
"""The longest wait for a message the server owes us (a guard; the wait ends on the event)."""

ALLOWED = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED,
           grpc.StatusCode.NOT_FOUND}
"""Status codes bad input may earn; UNKNOWN and INTERNAL would be server bugs."""

INT32 = st.integers(-(2**31), 2**31 - 1)
TEXT = st.text(max_size=40)
WORDS = st.sampled_from(["take", "pass", "reveal", "keep", ""]) | TEXT


# The strategies draw templates that never depend on the live match (hypothesis replays
# draws), and ``resolve`` fills in what the seat was asked at send time: "the pending
# decision id", "the i-th legal card".
ID_PICK = st.one_of(st.just(("pending",)), st.tuples(st.just("asked"), st.integers(0, 999)),
                    st.tuples(st.just("text"), TEXT))
CARD_PICK = st.one_of(st.tuples(st.just("legal"), st.integers(0, 99)),
                      st.tuples(st.just("int"), INT32))
ACTIONS = st.one_of(st.tuples(st.just("card"), CARD_PICK),
                    st.tuples(st.just("row"), st.integers(-2, 5) | INT32),
                    st.tuples(st.just("word"), WORDS),
                    st.just(("none",)))
"""Any Action: a card (often a legal one), a row, a word, or nothing set."""
ANSWERS = st.tuples(ID_PICK, ACTIONS | st.none())
"""An Answer to the pending decision, to one asked before, or to any text; with any action
or none at all."""
PLAY_REQUESTS = st.one_of(st.tuples(st.just("answer"), ANSWERS),
                          st.tuples(st.just("join"), TEXT),
                          st.just(("empty",)))
"""A PlayRequest: an answer, a repeated Join, or no body at all."""


def resolve_action(template: tuple[Any, ...], legal: list[int]) -> pb.Action:
    """The Action ``template`` names, given the pending decision's legal cards."""
    kind = template[0]
    if kind == "card":
        pick, value = template[1]
        card = legal[value % len(legal)] if pick == "legal" and legal else value
        return pb.Action(card=card)
    if kind == "row":
        return pb.Action(row=template[1])
    if kind == "word":
        return pb.Action(word=template[1])
    return pb.Action()


def resolve_answer(template: tuple[Any, ...], asked: list[str], legal: list[int]) -> pb.Answer:
    """The Answer ``template`` names, given the ids the seat was asked (last: pending)."""
    (pick, *value), action = template
    if pick == "pending":
        decision_id = asked[-1] if asked else ""
    elif pick == "asked":
        decision_id = asked[value[0] % len(asked)] if asked else ""
    else:
        decision_id = value[0]
    if action is None:
        return pb.Answer(decision_id=decision_id)
    return pb.Answer(decision_id=decision_id, action=resolve_action(action, legal))


def resolve_request(template: tuple[Any, ...], asked: list[str],
                    legal: list[int]) -> pb.PlayRequest:
    """The PlayRequest ``template`` names."""
    if template[0] == "answer":
        return pb.PlayRequest(answer=resolve_answer(template[1], asked, legal))
    if template[0] == "join":
        return pb.PlayRequest(join=pb.Join(client=template[1]))
    return pb.PlayRequest()


class SeatStream:
    """One seat's Play stream over a blocking channel; a thread collects what comes back."""

    def __init__(self, channel: grpc.Channel, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.incoming: queue.SimpleQueue[pb.PlayResponse | grpc.RpcError | None] = \
            queue.SimpleQueue()
        play = channel.stream_stream(wire.PLAY,
                                     request_serializer=pb.PlayRequest.SerializeToString,
                                     response_deserializer=pb.PlayResponse.FromString)
        self.call: Any = play(iter(self.outgoing.get, None), metadata=self.metadata)
        self.asked: list[str] = []
        """Every decision id this seat was sent, in order."""
        self.pending: pb.DecisionRequest | None = None
        self.ended: pb.MatchEnded | None = None
        threading.Thread(target=self._read, daemon=True).start()
        self.send(pb.PlayRequest(join=pb.Join(client="fuzz")))

    def _read(self) -> None:
        try:
            for message in self.call:
                self.incoming.put(message)
        except grpc.RpcError as exc:
            self.incoming.put(exc)
        self.incoming.put(None)

    def send(self, message: pb.PlayRequest) -> None:
        """Queue one request on the stream."""
        self.outgoing.put(message)

    def next(self) -> pb.PlayResponse:
        """The next message; a stream that ends or fails here fails the test."""
        item = self.incoming.get(timeout=WAIT_S)
        if isinstance(item, grpc.RpcError):
            raise AssertionError(f"the Play stream failed: {item.code()} {item.details()}")
        assert item is not None, "the Play stream ended"
        body = item.WhichOneof("body")
        if body == "decision":
            self.pending = item.decision
            self.asked.append(item.decision.decision_id)
        elif body == "match_ended":
            self.ended = item.match_ended
        elif body == "accepted" and self.pending is not None \
                and item.accepted.decision_id == self.pending.decision_id:
            self.pending = None
        return item

    def legal_cards(self) -> list[int]:
        """The cards of the pending decision, if any."""
        return [a.card for a in self.pending.legal] if self.pending is not None else []

    def close(self) -> None:
        """End the request side and the call."""
        self.outgoing.put(None)
        self.call.cancel()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the whole module; its log must hold no traceback when it stops."""
    proc = ServerProcess(db_url(tmp_path_factory.mktemp("fuzz"))).start()
    yield proc
    log = proc.stop()
    assert "Traceback" not in log, log
    assert proc.proc is not None and proc.proc.returncode == 0, log


def assert_serving(address: str) -> None:
    """The standard health check still answers SERVING."""
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=wire.BOT_SERVICE), timeout=WAIT_S)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def finish_and_verify(served: ServerProcess, match_id: str, tokens: list[str],
                      held: list[SeatStream]) -> None:
    """Real bot processes take the match's seats (replacing the test's own streams, closed
    only once the bots are in) and play to the end; the stored replay verifies."""
    bots = [served.bot(t, "house:random") for t in tokens]
    for stream in held:
        stream.close()
    results = finish(bots)
    assert all(code == 0 for code, _ in results), results
    assert all(f"match {match_id} ended" in out for _, out in results), results
    stored = json.loads(served.replay(match_id))
    replay.verify(stored)
    assert_serving(served.address)


def hold(channel: grpc.Channel, token: str) -> SeatStream:
    """Join ``token``'s seat and never answer: with a long deadline the match waits on it."""
    return SeatStream(channel, token)


def start_without(channel: grpc.Channel, token: str) -> None:
    """Connect ``token``'s seat once so the match can start, then hang up: from then on the
    seat gets default actions at once and the match waits only on held seats."""
    seat = SeatStream(channel, token)
    while seat.next().WhichOneof("body") != "match_started":
        pass
    seat.close()


def test_fuzzed_answers_on_play_and_submit_answer(served: ServerProcess) -> None:
    """Any PlayRequest on the Play stream, and any SubmitAnswerRequest, gets exactly one
    in-band verdict per answer (accepted only for an id the seat was asked, rejections with a
    known reason and a message), the stream stays open, and the match ends with a replay
    that verifies."""
    match = served.create_match("six_nimmt", 2, "--house", "1=random", "--deadline-ms",
                                "60000", "--setting", "rounds=8")
    token = match.tokens[0]
    assert token is not None
    reasons = {pb.REJECT_REASON_MALFORMED_ACTION, pb.REJECT_REASON_ILLEGAL_ACTION,
               pb.REJECT_REASON_NOT_PENDING}
    with grpc.insecure_channel(served.address) as channel:
        seat = SeatStream(channel, token)
        while seat.pending is None:
            seat.next()
        submit = channel.unary_unary(
            wire.SUBMIT_ANSWER, request_serializer=pb.SubmitAnswerRequest.SerializeToString,
            response_deserializer=pb.SubmitAnswerResponse.FromString)

        def check(verdict: pb.AnswerAccepted | pb.AnswerRejected, asked: list[str]) -> None:
            if isinstance(verdict, pb.AnswerAccepted):
                assert verdict.decision_id in asked
            else:
                assert verdict.reason in reasons and verdict.message

        @FUZZ
        @given(st.lists(PLAY_REQUESTS, min_size=1, max_size=4), st.none() | ANSWERS)
        @example([("answer", (("pending",), ("card", ("legal", 0))))], None)  # accepted
        @example([("answer", (("pending",), ("word", "take")))],  # malformed, then illegal
                 (("pending",), ("card", ("int", 0))))
        def fuzz(templates: list[tuple[Any, ...]], unary: tuple[Any, ...] | None) -> None:
            if seat.ended is not None:
                return
            asked = list(seat.asked)
            requests = [resolve_request(t, asked, seat.legal_cards()) for t in templates]
            for message in requests:
                seat.send(message)
            owed = sum(m.WhichOneof("body") == "answer" for m in requests)
            while owed and seat.ended is None:
                item = seat.next()
                body = item.WhichOneof("body")
                if body in ("accepted", "rejected"):
                    check(getattr(item, body), asked)
                    owed -= 1
            if unary is not None and seat.ended is None:
                asked = list(seat.asked)
                request = pb.SubmitAnswerRequest(
                    answer=resolve_answer(unary, asked, seat.legal_cards()))
                reply = submit(request, metadata=seat.metadata, timeout=WAIT_S)
                body = reply.WhichOneof("verdict")
                assert body is not None
                check(getattr(reply, body), asked)

        fuzz()
        assert_serving(served.address)
        finish_and_verify(served, match.match_id, [token], [seat])


def test_fuzzed_subscribe_watch_and_raw_bytes(served: ServerProcess) -> None:
    """Random bytes on every method (through a raw channel with identity serializers), and
    random SubscribeRequests and WatchRequests, get a message stream or INVALID_ARGUMENT,
    RESOURCE_EXHAUSTED or NOT_FOUND, never UNKNOWN or INTERNAL; the server stays SERVING and
    the match the seat belongs to still finishes with a replay that verifies."""
    match = served.create_match("no_thanks", 3, "--house", "2=threshold", "--deadline-ms",
                                "60000")
    token, other = match.tokens[0], match.tokens[1]
    assert token is not None and other is not None
    metadata = (("authorization", f"Bearer {token}"),)
    messages = st.one_of(
        st.builds(lambda c: pb.SubscribeRequest(client=c).SerializeToString(), TEXT),
        st.builds(lambda m: pb.WatchRequest(match_id=m).SerializeToString(),
                  TEXT | st.just(match.match_id)),
        st.builds(lambda t: resolve_request(t, [], []).SerializeToString(), PLAY_REQUESTS),
        st.binary(max_size=64),
        st.binary(min_size=wire.MAX_MESSAGE_BYTES + 1, max_size=wire.MAX_MESSAGE_BYTES + 8))
    methods = st.sampled_from([wire.PLAY, wire.SUBSCRIBE, wire.SUBMIT_ANSWER, wire.WATCH])
    options = [("grpc.max_send_message_length", 1 << 20)]
    with grpc.insecure_channel(served.address, options=options) as channel:
        held = hold(channel, other)
        start_without(channel, token)
        while held.pending is None:  # seat 0 has passed by default: there is a public event
            held.next()

        @FUZZ
        @given(methods, st.lists(messages, min_size=1, max_size=3))
        @example(wire.SUBSCRIBE, [pb.SubscribeRequest(client="x").SerializeToString()])
        @example(wire.WATCH, [pb.WatchRequest(match_id=match.match_id).SerializeToString()])
        @example(wire.PLAY, [b"\xff\xff\xff\xff garbage"])
        @example(wire.SUBMIT_ANSWER, [b"\x0a" * (wire.MAX_MESSAGE_BYTES + 1)])
        def fuzz(method: str, payloads: list[bytes]) -> None:
            try:
                if method == wire.SUBMIT_ANSWER:
                    unary: grpc.UnaryUnaryMultiCallable[bytes, bytes] = \
                        channel.unary_unary(method)
                    unary(payloads[0], metadata=metadata, timeout=WAIT_S)
                    return
                if method == wire.PLAY:
                    play: grpc.StreamStreamMultiCallable[bytes, bytes] = \
                        channel.stream_stream(method)
                    call = play(iter(payloads), metadata=metadata, timeout=WAIT_S)
                else:
                    stream: grpc.UnaryStreamMultiCallable[bytes, bytes] = \
                        channel.unary_stream(method)
                    call = stream(payloads[0], metadata=metadata, timeout=WAIT_S)
                first = next(call, None)  # one message shows the stream works; then hang up
                call.cancel()
                if first is not None:
                    if method == wire.WATCH:
                        parsed = pb.WatchResponse.FromString(first)
                        assert parsed.WhichOneof("body") is not None
                    elif method == wire.SUBSCRIBE:
                        subscribed = pb.SubscribeResponse.FromString(first)
                        assert subscribed.message.WhichOneof("body") is not None
                    else:
                        assert pb.PlayResponse.FromString(first).WhichOneof("body") is not None
            except grpc.RpcError as exc:
                if exc.code() is grpc.StatusCode.CANCELLED:
                    return  # our own hang-up
                assert exc.code() in ALLOWED, (exc.code(), exc.details())

        fuzz()
        assert_serving(served.address)
        finish_and_verify(served, match.match_id, [token, other], [held])


def test_garbage_after_join_ends_only_that_stream(served: ServerProcess) -> None:
    """Random bytes after a well-formed Join end that Play stream with INVALID_ARGUMENT (or
    are read as a message), while the seat can come back and finish its match."""
    match = served.create_match("six_nimmt", 2, "--deadline-ms", "60000", "--setting",
                                "rounds=1")
    token, other = match.tokens[0], match.tokens[1]
    assert token is not None and other is not None
    metadata = (("authorization", f"Bearer {token}"),)
    join = pb.PlayRequest(join=pb.Join(client="fuzz")).SerializeToString()
    probe = pb.PlayRequest(answer=pb.Answer(decision_id="probe")).SerializeToString()
    with grpc.insecure_channel(served.address) as channel:
        held = hold(channel, other)

        @FUZZ
        @given(st.lists(st.binary(min_size=1, max_size=48), min_size=1, max_size=3))
        def fuzz(garbage: list[bytes]) -> None:
            outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
            play: grpc.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(wire.PLAY)
            call = play(iter(outgoing.get, None), metadata=metadata, timeout=WAIT_S)
            outgoing.put(join)
            try:
                first = pb.PlayResponse.FromString(next(call))
                assert first.WhichOneof("body") == "match_started"
                for chunk in [*garbage, probe]:
                    outgoing.put(chunk)
                for raw in call:  # verdicts for whatever parsed, up to the probe's
                    message = pb.PlayResponse.FromString(raw)
                    assert message.WhichOneof("body") is not None
                    if message.rejected.decision_id == "probe":
                        break
            except grpc.RpcError as exc:
                assert exc.code() in ALLOWED, (exc.code(), exc.details())
            finally:
                call.cancel()

        fuzz()
        assert_serving(served.address)
        finish_and_verify(served, match.match_id, [token, other], [held])
