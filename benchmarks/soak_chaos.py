"""The soak's trouble-makers (benchmarks/soak.py): a raw gRPC client that sends garbage,
and the chaos driver that crashes, stalls and upgrades bots at random intervals."""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

import grpc  # noqa: E402

from benchmarks.soak_processes import Bot, Server  # noqa: E402
from bullring.contract import wire  # noqa: E402
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb  # noqa: E402
from bullring.server.store import Store  # noqa: E402

BAD_CODES = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
"""Status codes that would mean the server failed on garbage."""


class Garbage:
    """A client that sends the server garbage on raw gRPC streams, in its own thread."""

    def __init__(self, address: str, tokens: list[str], garbage_token: str,
                 rng: random.Random) -> None:
        self.address = address
        self.tokens = tokens
        self.garbage_token = garbage_token
        self.rng = rng
        self.events: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.bad: list[str] = []
        self._last_bytes: tuple[bytes, str | None] = (b"", None)
        """The first message of the newest call and its token: asked again by grpc's sync
        client when grpc.aio loses the server's status to its own write."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def start(self) -> None:
        """Start sending."""
        self._thread.start()

    def stop(self) -> None:
        """Stop sending and wait for the thread."""
        self._stop.set()
        self._thread.join(timeout=60)

    def _noise(self) -> bytes:
        return self.rng.randbytes(self.rng.randrange(0, 200))

    def _note(self, kind: str, error: grpc.aio.AioRpcError | None) -> None:
        self.events[kind] += 1
        code = "OK" if error is None else error.code().name
        if error is not None and wire.lost_to_own_write(error):
            # grpc/grpc#36066, on any kind of call (random bytes, a refused token): the server
            # refused the call before reading it and our client's write lost the server's
            # status. Ask the same call again with grpc's sync client (which reports the status
            # the server sent); only that status is judged.
            sent = self._ask_sync(*self._last_bytes)
            code = f"INTERNAL lost to the client's write (grpc#36066), server sent {sent.name}"
            if sent in BAD_CODES:
                self.bad.append(f"{kind}: {code}: {error.details()}")
        elif error is not None and error.code() in BAD_CODES:
            self.bad.append(f"{kind}: {error.code().name}: {error.details()}: "
                            f"{error.debug_error_string()}")
        self.codes[code] += 1

    def _ask_sync(self, body: bytes, token: str | None) -> grpc.StatusCode:
        """The status the server answers ``body`` on Play with, asked by grpc's sync client."""
        with grpc.insecure_channel(self.address) as channel:
            play: Any = channel.stream_stream(wire.PLAY)
            try:
                for _ in play(iter([body]), metadata=self._metadata(token), timeout=30):
                    pass
            except grpc.RpcError as exc:
                return exc.code()
        return grpc.StatusCode.OK

    async def _run(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            while not self._stop.is_set():
                kind = self.rng.choice(["bytes", "bytes", "submit", "badtoken", "join",
                                        "join", "badgame"])
                try:
                    await asyncio.wait_for(getattr(self, f"_{kind}")(channel), 30)
                    self._note(kind, None)
                except grpc.aio.AioRpcError as exc:
                    self._note(kind, exc)
                except TimeoutError:
                    self.events[kind + "-timeout"] += 1
                await asyncio.sleep(self.rng.uniform(0.2, 2.0))

    def _metadata(self, token: str | None) -> list[tuple[str, str]]:
        return [] if token is None else [("authorization", f"Bearer {token}")]

    async def _bytes(self, channel: grpc.aio.Channel) -> None:
        """Random bytes as the first message of a Play stream, with any token or none."""
        token = self.rng.choice([*self.tokens, self.garbage_token, "bot_nonsense", None])
        body = self._noise() + b"\xff\xff\xff"
        self._last_bytes = (body, token)
        play: Any = channel.stream_stream(wire.PLAY)  # no serializers: raw bytes
        call = play(iter([body]), metadata=self._metadata(token))
        async for _ in call:
            pass

    async def _submit(self, channel: grpc.aio.Channel) -> None:
        """SubmitAnswer with random bytes or a malformed answer."""
        token = self.rng.choice([self.garbage_token, "bot_nonsense"])
        body = self._noise() if self.rng.random() < 0.5 else pb.SubmitAnswerRequest(
            answer=pb.Answer(decision_id=self.rng.choice(["", "x", "0" * 50]),
                             action=self._action())).SerializeToString()
        submit: Any = channel.unary_unary(wire.SUBMIT_ANSWER)  # raw bytes
        await submit(body, metadata=self._metadata(token))

    async def _badtoken(self, channel: grpc.aio.Channel) -> None:
        """A well-formed ladder Join with a token nobody holds."""
        await self._session(channel, "bot_" + uuid.uuid4().hex, 1.0)

    async def _badgame(self, channel: grpc.aio.Channel) -> None:
        """A Join with the garbage bot's token for a game with no ladder."""
        await self._session(channel, self.garbage_token, 1.0,
                            game=self.rng.choice(["chess", "", "six_nimmt/99"]))

    async def _join(self, channel: grpc.aio.Channel) -> None:
        """Join a ladder with the garbage bot, answer whatever comes with garbage for a
        while, then drop the stream (sometimes mid-match)."""
        await self._session(channel, self.garbage_token, self.rng.uniform(1, 15))

    def _action(self) -> pb.Action:
        pick = self.rng.randrange(4)
        if pick == 0:
            return pb.Action(card=self.rng.randrange(-(2**31), 2**31))
        if pick == 1:
            return pb.Action(row=self.rng.randrange(-3, 8))
        if pick == 2:
            return pb.Action(word=self.rng.choice(["take", "pass", "reveal", "", "\u2603" * 9]))
        return pb.Action()

    async def _session(self, channel: grpc.aio.Channel, token: str, seconds: float,
                       game: str | None = None) -> None:
        game = game if game is not None else self.rng.choice(["six_nimmt", "no_thanks"])
        call = channel.stream_stream(
            wire.PLAY, request_serializer=pb.PlayRequest.SerializeToString,
            response_deserializer=pb.PlayResponse.FromString)(metadata=self._metadata(token))
        join = pb.PlayRequest(join=pb.Join(client="soak-garbage", ladder=game))
        self._last_bytes = (join.SerializeToString(), token)
        await call.write(join)
        ends = time.monotonic() + seconds
        try:
            while (left := ends - time.monotonic()) > 0 and not self._stop.is_set():
                try:
                    message: Any = await asyncio.wait_for(call.read(), left)
                except TimeoutError:
                    break
                if message is grpc.aio.EOF:
                    break
                if message.WhichOneof("body") != "decision":
                    continue
                decision = message.decision
                answer = self.rng.random()
                if answer < 0.3:
                    await call.write(pb.PlayRequest(answer=pb.Answer(
                        decision_id=decision.decision_id, action=self._action())))
                elif answer < 0.5:
                    await call.write(pb.PlayRequest(answer=pb.Answer(
                        decision_id=uuid.uuid4().hex, action=self._action())))
                elif answer < 0.6:
                    await call.write(pb.PlayRequest(join=pb.Join(ladder=game)))
                elif answer < 0.7:
                    await call.write(pb.PlayRequest())
                elif answer < 0.8 and decision.legal:  # a legal answer, twice
                    legal = pb.Answer(decision_id=decision.decision_id,
                                      action=self.rng.choice(list(decision.legal)))
                    await call.write(pb.PlayRequest(answer=legal))
                    await call.write(pb.PlayRequest(answer=legal))
                # else: stay silent past the deadline
        finally:
            call.cancel()
        code = await call.code()
        if code not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
            raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                       await call.details())


# --------------------------------------------------------------------------- chaos


class Chaos:
    """Crashes, stalls and new versions of the bots, at random intervals."""

    def __init__(self, bots: list[Bot], server: Server, store: Store, deadline_ms: int,
                 rng: random.Random) -> None:
        self.bots = bots
        self.server = server
        self.store = store
        self.deadline_s = deadline_ms / 1000
        self.rng = rng
        self.events: Counter[str] = Counter()
        self.versions: list[tuple[str, int]] = []
        self._pending: list[tuple[float, str, Bot]] = []
        """(when, what, bot): a restart or a SIGCONT due."""

    def busy(self, bot: Bot) -> bool:
        """The bot has a restart or SIGCONT pending."""
        return any(b is bot for _, _, b in self._pending)

    def tick(self, now: float) -> None:
        """Do whatever is due at ``now``."""
        for item in [p for p in self._pending if p[0] <= now]:
            self._pending.remove(item)
            _, what, bot = item
            if what == "restart":
                bot.start(self.server.address)
            elif what == "cont":
                bot.cont()
        for bot in self.bots:
            if not self.busy(bot):
                bot.check(self.server.address)

    def strike(self) -> None:
        """One chaos event on a bot that is not already down."""
        idle = [b for b in self.bots if not self.busy(b)]
        if not idle:
            return
        bot = self.rng.choice(idle)
        kind = self.rng.choices(["crash", "stall", "version"], weights=[4, 4, 1])[0]
        now = time.monotonic()
        if kind == "crash":
            bot.kill()
            self._pending.append((now + self.rng.uniform(0, 3), "restart", bot))
        elif kind == "stall":
            bot.stop()
            pause = self.rng.uniform(2 * self.deadline_s, 20 * self.deadline_s)
            self._pending.append((now + pause, "cont", bot))
        else:
            bot.kill()
            marker = (float("inf"), "version", bot)
            self._pending.append(marker)
            # Disabled (so the server, which may not have seen the kill yet, cannot seat it
            # again) and waiting for its match to end, the version starts between matches:
            # every rated match then names the version whose rating it started from.
            self.store.set_enabled(bot.name, False)
            waited = time.monotonic() + 120
            while self.store.bot(bot.name).current_match is not None:
                if time.monotonic() > waited:
                    raise RuntimeError(f"{bot.name}'s match did not end within 120 s")
                time.sleep(0.05)
                self.tick(time.monotonic())
            self._pending.remove(marker)
            self.versions.append((bot.name, self.store.new_version(bot.name)))
            self.store.set_enabled(bot.name, True)
            bot.start(self.server.address)
        self.events[kind] += 1

    def settle(self) -> None:
        """Finish every pending restart and SIGCONT now."""
        for _, what, bot in self._pending:
            if what == "restart":
                bot.start(self.server.address)
            elif what == "cont":
                bot.cont()
        self._pending.clear()


