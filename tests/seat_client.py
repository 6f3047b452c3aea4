"""A bare protocol client for tests: one seat's Play stream, message by message."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb


class SeatClient:
    """Drives one Play stream by hand: send any request, wait for the next message."""

    def __init__(self, channel: grpc.aio.Channel, token: str, batches: bool = False) -> None:
        self._outgoing: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        self.call: Any = wire.bot_stub(channel)["Play"](
            self._requests(), metadata=[("authorization", f"Bearer {token}")])
        self.batches = batches
        """Whether Join asks for batches (PlayResponse.batch)."""
        self.seen: list[pb.PlayResponse] = []
        """Every message read so far, batches unpacked."""
        self.received: list[pb.PlayResponse] = []
        """Every response as it came off the stream, batches included."""
        self._unread: collections.deque[pb.PlayResponse] = collections.deque()

    async def _requests(self) -> AsyncIterator[pb.PlayRequest]:
        while (message := await self._outgoing.get()) is not None:
            yield message

    def send(self, message: pb.PlayRequest) -> None:
        """Queue one request on the stream."""
        self._outgoing.put_nowait(message)

    def join(self) -> None:
        """Send the Join that must open the stream."""
        self.send(pb.PlayRequest(join=pb.Join(client="test", accept_batches=self.batches)))

    def answer(self, decision_id: str, action: pb.Action) -> None:
        """Send an answer."""
        self.send(pb.PlayRequest(answer=pb.Answer(decision_id=decision_id, action=action)))

    async def read(self) -> pb.PlayResponse | None:
        """The next message (one at a time out of a batch), or None once the stream ended."""
        while not self._unread:
            response = await self.call.read()
            if response is grpc.aio.EOF:
                return None
            self.received.append(response)
            self._unread.extend(wire.unbatch(response))
        message = self._unread.popleft()
        self.seen.append(message)
        return message

    async def next(self, kind: str) -> Any:
        """The next message of ``kind`` (a PlayResponse body name), skipping others."""
        while True:
            message = await self.read()
            if message is None:
                raise EOFError(f"stream ended while waiting for {kind}")
            if message.WhichOneof("body") == kind:
                return getattr(message, kind)

    def close(self) -> None:
        """End the request side of the stream."""
        self._outgoing.put_nowait(None)
