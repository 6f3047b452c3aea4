"""``bullring serve``: the grpc.aio server with health, reflection and graceful shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from client_sdk import wire
from server.api.app import build_app
from server.api.context import ApiContext
from server.api.serving import HttpServer
from server.hub import MatchHub
from server.service import BotService, SpectatorService, TokenInterceptor
from server.store import DEFAULT_DB, Store

log = logging.getLogger("bullring.server")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """Where the server listens and what it stores to."""

    host: str = "127.0.0.1"
    port: int = 50051
    db: str = DEFAULT_DB
    start_timeout_s: float = 60.0
    grace_s: float = 5.0
    http_port: int | None = 8080
    """The HTTP API and web page's port (0 picks a free one; None: no HTTP)."""
    admin_token: str | None = None
    """The token admin operations need; None turns them off."""


class RefereeServer:
    """The referee's gRPC server: bots' and spectators' services, health and reflection."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.store = Store(options.db)
        self.hub = MatchHub(self.store, options.start_timeout_s)
        self.health = health.aio.HealthServicer()
        self.server = grpc.aio.server(interceptors=[TokenInterceptor(self.hub)],
                                      options=wire.channel_options())
        self.server.add_generic_rpc_handlers((BotService(self.hub).handler(),
                                              SpectatorService(self.hub).handler()))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = (wire.BOT_SERVICE, wire.SPECTATOR_SERVICE,
                 health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                 reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, self.server)
        self.port = 0
        self.http: HttpServer | None = None
        if options.http_port is not None:
            app = build_app(ApiContext(self.hub, options.admin_token))
            self.http = HttpServer(app, options.host, options.http_port, options.grace_s)

    async def start(self) -> int:
        """Bind and start serving; return the port (useful with port 0)."""
        self.port = self.server.add_insecure_port(f"{self.options.host}:{self.options.port}")
        await self.server.start()
        if self.http is not None:
            try:
                await self.http.start()
            except OSError:
                await self.server.stop(0)
                raise
        for name in ("", wire.BOT_SERVICE, wire.SPECTATOR_SERVICE):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return self.port

    async def stop(self) -> None:
        """Stop gracefully: refuse new calls, abort live matches (stored as aborted)."""
        await self.health.enter_graceful_shutdown()
        await self.hub.shutdown()
        if self.http is not None:
            await self.http.stop()
        await self.server.stop(self.options.grace_s)


async def serve(options: ServerOptions) -> None:
    """Run the server until SIGTERM or SIGINT."""
    server = RefereeServer(options)
    try:
        port = await server.start()
    except OSError as exc:
        print(f"bullring: cannot listen on {options.host}: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from exc
    print(f"bullring: listening on {options.host}:{port} (database {options.db})", flush=True)
    if server.http is not None:
        print(f"bullring: web page and HTTP API on http://{_url_host(options.host)}:"
              f"{server.http.port}/ (OpenAPI: /openapi.json)", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("bullring: shutting down", flush=True)
    await server.stop()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def main(options: ServerOptions) -> int:
    """Entry point of ``bullring serve``."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    asyncio.run(serve(options))
    return 0
