"""A client pointed at the wrong address says so at once, in one line: a port where nothing
listens is named as refusing the connection, and Bullring's HTTP port, dialled with gRPC,
names the server's gRPC port; ``bullring bot`` and ``bullring health`` as a user runs them,
against a real server."""

from __future__ import annotations

import socket
import subprocess
import time
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest

from bullring.commandline.reach import GRPC_PORT_HEADER
from tests.serving import CLI, ServerProcess


def _closed_port() -> str:
    """A loopback address where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def _bullring(*argv: str) -> tuple[int, str, str, float]:
    """``bullring ARGV`` as a process: its status, stdout, stderr and seconds taken."""
    began = time.monotonic()
    done = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - began


def test_a_port_where_nothing_listens_is_named_refused_at_once() -> None:
    """``bullring bot`` (which would retry for its 60 s --give-up-after) and ``bullring
    health`` (which would wait out its 3 s deadline) each say in one line that the address
    refused the connection, with exit status 4 (unreachable)."""
    address = _closed_port()
    for argv in (["bot", "--server", address, "--token", "x", "house:random"],
                 ["health", "--server", address, "--timeout", "30"]):
        status, out, err, took = _bullring(*argv)
        assert status == 4, (argv, err)
        assert err.count("\n") == 1 and f"{address} refused the connection" in err, err
        assert out == "" and "DEADLINE_EXCEEDED" not in err and "gave up" not in err
        assert took < 25, (argv, took)  # far inside both deadlines


def test_the_http_port_dialled_with_grpc_names_the_grpc_port(server: ServerProcess) -> None:
    """Bullring's HTTP responses, refusals too, name the server's gRPC port; ``bullring bot``
    and ``bullring health`` pointed at the HTTP port say that it is the HTTP port and which
    address to use, in one line, exit status 4."""
    grpc_port = server.address.rsplit(":", 1)[1]
    with urlopen(f"{server.http}/api/games", timeout=10) as response:
        assert response.headers[GRPC_PORT_HEADER] == grpc_port
    with pytest.raises(HTTPError) as refused:
        urlopen(Request(f"{server.http}/api/admin/bots", data=b"{}", method="POST"), timeout=10)
    assert refused.value.code == 401 and refused.value.headers[GRPC_PORT_HEADER] == grpc_port
    http = server.http.removeprefix("http://")
    for argv in (["bot", "--server", http, "--token", "x", "--ladder", "six_nimmt",
                  "house:random"], ["health", "--server", http]):
        status, out, err, _ = _bullring(*argv)
        assert status == 4, (argv, err)
        assert err.count("\n") == 1, err
        assert f"{http} is Bullring's HTTP port" in err
        assert f"use --server {server.address}" in err
        assert out == ""
