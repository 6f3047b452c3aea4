"""uvicorn serving the HTTP app inside the running event loop (beside grpc.aio)."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import uvicorn
from fastapi import FastAPI


class HttpServer:
    """One uvicorn server on a socket bound up front (so port 0 tells the real port)."""

    def __init__(self, app: FastAPI, host: str, port: int, grace_s: float = 5.0) -> None:
        self.host = host
        self.requested_port = port
        self.config = uvicorn.Config(app, host=host, port=port, lifespan="off",
                                     log_config=None, log_level="warning", access_log=False,
                                     timeout_graceful_shutdown=max(1, round(grace_s)))
        self.server = uvicorn.Server(self.config)
        self.socket: socket.socket | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> int:
        """Bind and start serving; return the port. OSError if the port is taken."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.requested_port))
        except OSError:
            sock.close()
            raise
        sock.listen(self.config.backlog)
        sock.setblocking(False)
        self.socket = sock
        self.port = int(sock.getsockname()[1])
        self.config.load()
        self.server.lifespan = self.config.lifespan_class(self.config)
        await self.server.startup(sockets=[sock])
        self._loop_task = asyncio.create_task(self.server.main_loop(), name="http")
        return self.port

    async def stop(self) -> None:
        """Close open connections (streams end) and stop."""
        if self._loop_task is None:
            return
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._loop_task
        await self.server.shutdown(sockets=[self.socket] if self.socket else None)
        self._loop_task = None
