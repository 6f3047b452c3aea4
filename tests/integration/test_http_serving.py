"""The HTTP server's connections (``server/transports/http/serving.py``), on a real socket."""

from __future__ import annotations

import asyncio
import socket

from fastapi import FastAPI

from bullring.server.transports.http.serving import HttpServer


async def _response(reader: asyncio.StreamReader) -> bytes:
    """One HTTP/1.1 response with a Content-Length: its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return await reader.readexactly(length)


def test_connections_send_small_writes_at_once() -> None:
    """Each connection the HTTP server accepts has Nagle's algorithm off (TCP_NODELAY): a
    response goes out as its head and then its body, and with Nagle's algorithm on the body
    would wait for the client to acknowledge the head, which a client on a kept-alive
    connection delays (40 ms on Linux) on every request after its first."""
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    async def served() -> tuple[list[bytes], int]:
        server = HttpServer(app, "127.0.0.1", 0)
        port = await server.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            bodies = []
            for _ in range(2):  # one kept-alive connection
                writer.write(b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                bodies.append(await _response(reader))
            (connection,) = server.server.server_state.connections
            accepted = connection.transport.get_extra_info("socket")
            no_delay = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()
            await writer.wait_closed()
        finally:
            await server.stop()
        return bodies, no_delay

    bodies, no_delay = asyncio.run(served())
    assert bodies == [b'{"pong":"yes"}'] * 2
    assert no_delay != 0
