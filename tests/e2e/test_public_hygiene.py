"""What a server open to the public must not let through, each on a real ``bullring serve``:
names that end in a newline, log lines forged through a header, the admin token in the log,
and pages without a Content-Security-Policy (the MCP seat's side: ``test_mcp.py``)."""

from __future__ import annotations

import asyncio
import re
import stat
import subprocess
import unicodedata
from pathlib import Path

import grpc
import httpx

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.store import Store
from tests.serving import CLI, ServerProcess, db_url

RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \S+ [A-Z]+ ")
"""How every record of the server's log starts (a traceback's lines are indented)."""


def _register(server: ServerProcess, admin: str, name: str) -> grpc.StatusCode:
    """gRPC AdminService.RegisterBot ``name``: its status."""
    async def call() -> grpc.StatusCode:
        async with grpc.aio.insecure_channel(server.address) as channel:
            register = channel.unary_unary(
                f"/{wire.ADMIN_SERVICE}/RegisterBot",
                request_serializer=pb.RegisterBotRequest.SerializeToString,
                response_deserializer=pb.RegisterBotResponse.FromString)
            try:
                await register(pb.RegisterBotRequest(name=name),
                               metadata=[("authorization", f"Bearer {admin}")])
            except grpc.aio.AioRpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK
    return asyncio.run(call())


def test_a_name_that_ends_in_a_newline_is_refused_on_every_path(server: ServerProcess) -> None:
    """A pattern that ends in ``$`` also matches before a trailing newline, so "evil\\n" was
    a valid bot name and split the log's lines. Names are checked whole (``fullmatch``):
    gRPC AdminService refuses it (INVALID_ARGUMENT), the HTTP admin API (422: its schema's
    pattern), ``bullring
    bots add`` on the database and over the network (2); no such bot is registered, and the
    same name without the newline is taken everywhere."""
    admin = server.admin_token()
    headers = {"Authorization": f"Bearer {admin}"}
    for name in ("evil\n", "evil\r\n", "evil\n\n"):
        assert _register(server, admin, name) == grpc.StatusCode.INVALID_ARGUMENT, repr(name)
        refused = httpx.post(f"{server.http}/api/admin/bots", json={"name": name},
                             headers=headers)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "invalid_request"
        for where in (["--db", server.db], ["--server", server.address, "--admin-token", admin]):
            added = subprocess.run([*CLI, "bots", "add", name, *where], capture_output=True,
                                   text=True, timeout=60)
            assert added.returncode == 2, (name, where, added.stdout, added.stderr)
            assert "bad bot name" in added.stderr and len(added.stderr.splitlines()) == 1
    assert [b.name for b in Store(server.db).bots()] == []
    assert _register(server, admin, "evil") == grpc.StatusCode.OK
    assert httpx.post(f"{server.http}/api/admin/bots", json={"name": "evil2"},
                      headers=headers).status_code == 201
    added = subprocess.run([*CLI, "bots", "add", "evil3", "--db", server.db],
                           capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    assert sorted(b.name for b in Store(server.db).bots()) == ["evil", "evil2", "evil3"]


FORGED = ("\x1b[31mforged\x85line",
          "\x1b[2K\x1b[1G2026-01-01 00:00:00 bullring.ladder INFO bot admin\x85joined",
          "\x9b2J\x7fforged\x1b]0;title\x07")
"""X-Forwarded-For values (latin-1 bytes, as a header carries them; no comma, which
separates a proxy chain's addresses): ANSI colours, a line erased and rewritten as a record
of the server's own, a C1 escape, DEL and a terminal
title; NEL (\\x85) breaks a line for Python's ``splitlines`` and many log viewers."""


def _unsafe(text: str) -> list[str]:
    """The control, format and separator characters of ``text`` but its newlines."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl",
                                                                       "Zp")]


def test_forwarded_for_and_user_agent_cannot_forge_log_lines(server: ServerProcess) -> None:
    """A registered bot long-polls its ladder place again and again, each time through a
    (loopback, so trusted) proxy that says it comes from a forged address: the server logs
    each older connection replaced by the newer one and names the newer one's address. The
    log holds no raw control byte and no extra line: each forged address is shown escaped,
    inside the one record that names it."""
    admin = {"Authorization": f"Bearer {server.admin_token()}"}
    made = httpx.post(f"{server.http}/api/admin/bots", json={"name": "proxied"}, headers=admin)
    assert made.status_code == 201, made.text
    bot = {b"Authorization": f"Bearer {made.json()['token']}".encode()}
    poll = f"{server.http}/api/play/poll?ladder=six_nimmt&wait_ms=0"
    assert httpx.get(poll, headers=bot).status_code == 200
    for forged in FORGED:
        raw = forged.encode("latin-1")
        answer = httpx.get(poll, headers={**bot, b"X-Forwarded-For": raw, b"User-Agent": raw})
        assert answer.status_code == 200, answer.text
    log = server.stop()
    assert not _unsafe(log), sorted(set(_unsafe(log)))
    lines = log.split("\n")
    assert log.splitlines() == lines[:-1]  # no line break but "\n"
    assert all(RECORD.match(line) or line.startswith("  ") for line in lines[:-1]), log
    replaced = [line for line in lines if "older connection was replaced" in line]
    assert len(replaced) == len(FORGED), log
    for line, forged in zip(replaced, FORGED, strict=True):
        shown = forged.encode("unicode_escape").decode("ascii")  # \x1b, \x85, \x07 ...
        assert f"HTTP long-poll from {shown}:0" in line, (line, shown)


def test_the_admin_token_goes_to_a_private_file_never_to_the_log(tmp_path: Path) -> None:
    """The first start writes the admin token beside the SQLite file
    (``bullring-admin-token``, mode 0600) and says where; the token is nowhere in what the
    server prints or logs, and it works. A second start makes none and leaves the file as
    it was; ``--admin-token-file`` puts it where it says."""
    server = ServerProcess(db_url(tmp_path)).start()
    try:
        token_file = tmp_path / "bullring-admin-token"
        assert server.admin_file == token_file
        token = server.first_admin_token()
        assert token.startswith("admin_")
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        made = httpx.post(f"{server.http}/api/admin/bots", json={"name": "ann"},
                          headers={"Authorization": f"Bearer {token}"})
        assert made.status_code == 201, made.text
    finally:
        log = server.stop()
    assert f"admin token written to {token_file} (mode 0600" in server.output
    assert token not in log and token not in server.output
    again = ServerProcess(server.db).start()
    log = again.stop()
    assert "admin token" not in again.output and token not in log + again.output
    assert token_file.read_text() == f"{token}\n"

    chosen = tmp_path / "secrets" / "admin"
    (tmp_path / "other").mkdir()
    other = ServerProcess(db_url(tmp_path / "other"), admin_file=chosen).start()
    log = other.stop()
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o600
    assert other.first_admin_token() not in log + other.output


CSP = {"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'",
       "base-uri 'none'", "frame-ancestors 'none'"}
"""Directives every response's Content-Security-Policy holds (and never 'unsafe-inline')."""


def _check_headers(response: httpx.Response) -> None:
    """The security headers of one response."""
    where = f"{response.request.method} {response.request.url} ({response.status_code})"
    policy = response.headers.get("content-security-policy", "")
    assert {d.strip() for d in policy.split(";")} >= CSP, (where, policy)
    assert "unsafe" not in policy, (where, policy)
    assert response.headers.get("x-content-type-options") == "nosniff", where
    assert response.headers.get("referrer-policy") == "no-referrer", where
    assert len(response.headers.get_list("content-security-policy")) == 1, where


def test_every_page_and_api_response_carries_the_security_headers(
        server: ServerProcess) -> None:
    """Every page, static file and API route (each operation of /openapi.json, called with
    and without a token, with made-up ids), its errors, the refusals made before a request
    is read (401, 413) and a live event stream carry a Content-Security-Policy with no
    inline script and ``frame-ancestors 'none'``, ``X-Content-Type-Options: nosniff`` and
    ``Referrer-Policy: no-referrer``."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random")
    web = Path(__file__).resolve().parents[2] / "server" / "web"
    with httpx.Client(base_url=server.http, timeout=30) as client:
        pages = ["/", "/api/docs", "/openapi.json", f"/play/{match.match_id}", "/nope",
                 *(f"/static/{f.name}" for f in sorted(web.iterdir()))]
        for path in pages:
            _check_headers(client.get(path))
        spec = client.get("/openapi.json").json()
        calls = 0
        for path, operations in spec["paths"].items():
            url = re.sub(r"\{[^}]+\}", "nope", path)
            for method in operations:
                if path.endswith(("/stream", "/feed")):
                    continue  # below, read as streams
                for headers in ({}, {"Authorization": "Bearer nope"}):
                    _check_headers(client.request(method.upper(), url, headers=headers))
                    calls += 1
        assert calls > 40, calls
        _check_headers(client.post("/api/admin/bots", content=b"x" * 2_000_000,
                                   headers={"Authorization": "Bearer nope"}))
        with client.stream("GET", "/api/play/stream",
                           headers={"Authorization": f"Bearer {match.tokens[0]}"}) as seat:
            assert seat.status_code == 200
            _check_headers(seat)
            next(line for line in seat.iter_lines() if "match_started" in line)
            with client.stream("GET", f"/api/matches/{match.match_id}/feed") as feed:
                assert feed.status_code == 200
                _check_headers(feed)
