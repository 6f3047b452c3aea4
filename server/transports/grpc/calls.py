"""What every gRPC servicer shares: the bearer token of a call, reading its request, the
interceptor that caps the calls of one client address, and the one that refuses BotService
calls without a known token. Refusals are answered from the one table of server/errors.py."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from bullring.contract import wire
from bullring.server.errors import (
    InvalidRequestError,
    NotAuthenticatedError,
    TooManyCallsError,
    abort_grpc,
    answer_grpc,
    message_of,
    status_of,
)
from bullring.server.match.hub import MatchHub
from bullring.server.transports.limits import AddressCounts, address_key, grpc_peer_host

Context = grpc.aio.ServicerContext[Any, Any]
"""A gRPC call's servicer context."""

T = TypeVar("T")

Work = Callable[[Any, Context], Awaitable[Any]]
"""What a unary method does with its parsed request."""


def bearer_token(metadata: Any) -> str | None:
    """The token of an ``authorization: Bearer TOKEN`` metadata entry, if any."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer "):].strip()
    return None


def required_token(context: Context, kind: str) -> str:
    """The call's bearer token (NotAuthenticatedError without one); ``kind`` names the
    token the message asks for, such as ``ADMIN_TOKEN``."""
    token = bearer_token(context.invocation_metadata())
    if token is None:
        raise NotAuthenticatedError(f"missing 'authorization: Bearer {kind}' metadata")
    return token


def parsed(cls: Any, raw: bytes | None) -> Any:
    """``raw`` read as a ``cls`` message; None if it is not one."""
    if raw is None:
        return None
    message = cls()
    try:
        message.ParseFromString(raw)
    except (DecodeError, RuntimeWarning, ValueError):
        return None
    return message


def read_request(cls: Any, raw: bytes) -> Any:
    """``raw`` read as a ``cls`` message (InvalidRequestError if it is not one)."""
    message = parsed(cls, raw)
    if message is None:
        raise InvalidRequestError(f"malformed {cls.DESCRIPTOR.name}")
    return message


async def at_once(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` as an awaitable, so that ``answer_grpc`` answers its refusal."""
    return call(*args)


def unary_method(request_type: Any, work: Work,
                 guard: Callable[[Context], Awaitable[None]] | None = None
                 ) -> Callable[[bytes, Context], Awaitable[Any]]:
    """A unary handler: ``guard`` checks the caller, then ``work`` answers the parsed
    request; a refusal of either ends the call with the table's status."""

    async def call(raw: bytes, context: Context) -> Any:
        if guard is not None:
            await guard(context)
        return await work(read_request(request_type, raw), context)

    async def handle(raw: bytes, context: Context) -> Any:
        return await answer_grpc(context, call(raw, context))
    return handle


def abort_handler(method: str, exc: Exception) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same shape as ``method`` that only ends the call with the table's
    status for ``exc``."""
    status = status_of(exc)
    if status is None:
        raise exc
    code, details = status.grpc, message_of(exc, status)

    async def unary(_request: Any, context: Context) -> None:
        await context.abort(code, details)

    async def stream(_request: Any, context: Context) -> AsyncIterator[bytes]:
        await context.abort(code, details)
        yield b""  # pragma: no cover - abort raises

    if method.endswith("/Play"):
        return grpc.stream_stream_rpc_method_handler(stream)
    if method.endswith("/Subscribe"):
        return grpc.unary_stream_rpc_method_handler(stream)
    return grpc.unary_unary_rpc_method_handler(unary)


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses BotService calls without a known bearer token (UNAUTHENTICATED)."""

    def __init__(self, hub: MatchHub) -> None:
        self.hub = hub

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails],
                                     Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """Check the token of BotService calls; pass everything else through."""
        method = handler_call_details.method
        if method.startswith(f"/{wire.BOT_SERVICE}/"):
            token = bearer_token(handler_call_details.invocation_metadata)
            try:
                if token is None:
                    raise NotAuthenticatedError("missing 'authorization: Bearer TOKEN' "
                                                "metadata")
                if await self.hub.identify(token) is None:
                    raise NotAuthenticatedError(self.hub.refusal(token))
            except Exception as exc:  # a refusal the table names; anything else raised again
                return abort_handler(method, exc)
        return await continuation(handler_call_details)


Continuation = Callable[[grpc.HandlerCallDetails],
                        Awaitable["grpc.RpcMethodHandler[Any, Any] | None"]]
"""What an interceptor calls for the handler of a call."""


class AddressCap(grpc.aio.ServerInterceptor):
    """Caps the concurrent calls of one client address (IPv6: one /64), over all its
    connections: a call past ``cap`` ends at once with RESOURCE_EXHAUSTED
    (``too_many_calls``). A call counts from its start until its handler returns (a stream
    until it ends). gRPC cannot cap connections per address; their handshake and idle
    timeouts bound the ones that hold no call."""

    def __init__(self, cap: int) -> None:
        self.counts = AddressCounts(cap)

    async def intercept_service(self, continuation: Continuation,
                                handler_call_details: grpc.HandlerCallDetails
                                ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """The call's handler, counted against its address's cap."""
        handler = await continuation(handler_call_details)
        if handler is None or not self.counts.cap:
            return handler
        return _counted(handler, self.counts)


def _counted(handler: grpc.RpcMethodHandler[Any, Any], counts: AddressCounts
             ) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with its calls counted in ``counts`` (refused past its cap). A handler
    run in grpc's thread pool (none of the server's) is left as it is."""
    inner: Any
    make: Callable[..., grpc.RpcMethodHandler[Any, Any]]
    if handler.request_streaming and handler.response_streaming:
        inner, make = handler.stream_stream, grpc.stream_stream_rpc_method_handler
    elif handler.response_streaming:
        inner, make = handler.unary_stream, grpc.unary_stream_rpc_method_handler
    elif handler.request_streaming:
        inner, make = handler.stream_unary, grpc.stream_unary_rpc_method_handler
    else:
        inner, make = handler.unary_unary, grpc.unary_unary_rpc_method_handler

    async def take(context: Context) -> str:
        key = address_key(grpc_peer_host(context.peer()))
        if not counts.take(key):
            await abort_grpc(context, TooManyCallsError(
                f"this address holds {counts.cap} calls already, as many as one address "
                f"may (--max-calls-per-address); end one and try again"))
        return key

    async def generator(request: Any, context: Context) -> AsyncIterator[Any]:
        key = await take(context)
        try:
            async for item in inner(request, context):
                yield item
        finally:
            counts.give_back(key)

    async def coroutine(request: Any, context: Context) -> Any:
        key = await take(context)
        try:
            return await inner(request, context)
        finally:
            counts.give_back(key)

    if inspect.isasyncgenfunction(inner):
        wrapped: Callable[..., Any] = generator
    elif inspect.iscoroutinefunction(inner):
        wrapped = coroutine
    else:
        return handler
    return make(wrapped, handler.request_deserializer, handler.response_serializer)
