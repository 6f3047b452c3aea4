"""``bullring serve``: the grpc.aio server with health, reflection and graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import logging
import os
import shlex
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from sqlalchemy.engine import make_url

from bullring import commandline as cli
from bullring.contract import wire
from bullring.sdk.house import HOUSE_BOTS
from bullring.server.challenges.offers import Challenges
from bullring.server.errors import BrokerError, DatabaseUnavailableError
from bullring.server.fleet.relay import Relay
from bullring.server.ladder.seating import Ladder, LadderOptions
from bullring.server.logs import formatter
from bullring.server.match.archive import DEFAULT_CACHE_BYTES
from bullring.server.match.hub import MatchHub
from bullring.server.metrics import ServerMetrics
from bullring.server.quotas import MatchCaps, Quotas
from bullring.server.store import DEFAULT_CHALLENGE_RETENTION_S, Store
from bullring.server.store.base import DEFAULT_DB
from bullring.server.store.instances import InstanceGuard
from bullring.server.store.retry import DEFAULT_BUDGET_S
from bullring.server.transports.grpc.admin import AdminService
from bullring.server.transports.grpc.calls import AddressCap, TokenInterceptor
from bullring.server.transports.grpc.challenges import ChallengeService
from bullring.server.transports.grpc.ladder import LadderService
from bullring.server.transports.grpc.servicers import BotService, SpectatorService
from bullring.server.transports.http.app import build_app
from bullring.server.transports.http.context import ApiContext, token_gate
from bullring.server.transports.http.serving import HttpServer
from bullring.server.transports.limits import Limits

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
    ladder: LadderOptions = field(default_factory=LadderOptions)
    """The ladders this server runs and its house bots."""
    db_retry_s: float = DEFAULT_BUDGET_S
    """How long a database call is retried while the database is unavailable."""
    limits: Limits = field(default_factory=Limits)
    """What clients may hold on both ports: connections, streams, sizes, silences."""
    human_matches: int = 8
    """Matches for people the web page's button may have open at once (0: no button)."""
    admin_token_file: Path | None = None
    """Where the first start writes the admin token (None: ``admin_token_path(db)``)."""
    caps: MatchCaps = field(default_factory=MatchCaps)
    """The caps on the settings of a match made without the admin token."""
    quotas: Quotas = field(default_factory=Quotas)
    """What one address or bot may ask for, open at once and per hour."""
    challenge_retention_s: float = DEFAULT_CHALLENGE_RETENTION_S
    """How long a challenge that is over is kept before the housekeeping deletes it."""
    replay_cache_bytes: int = DEFAULT_CACHE_BYTES
    """Memory for the encoded feeds and replays of ended matches, shared by their readers."""
    metrics: str = "admin"
    """Who may read /metrics (``bullring.server.metrics.ACCESS``)."""
    log_format: str = "text"
    """How the log is written: ``text`` lines or ``json`` objects (``bullring.server.logs``)."""
    worker: int | None = None
    """This process's index among the workers of ``bullring serve --workers N`` (None: the
    only process): it shares its ports with the other workers (``SO_REUSEPORT``)."""
    broker: str | None = None
    """The NATS broker through which the servers sharing a PostgreSQL database relay the
    seats of their bots to each other's matches (``nats://HOST:PORT``); None: this server
    seats its own bots only."""


SERVICES = (wire.BOT_SERVICE, wire.SPECTATOR_SERVICE, wire.ADMIN_SERVICE, wire.LADDER_SERVICE,
            wire.CHALLENGE_SERVICE)
"""The contract's services this server serves: each is listed by reflection and answers
SERVING to a health check (grpc.health.v1) once the server has started."""


class RefereeServer:
    """The referee's gRPC server: bots' and spectators' services, health and reflection."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.metrics = ServerMetrics()
        """This server's metrics, with a registry of its own (served at /metrics)."""
        self.store = Store(options.db, options.db_retry_s, self.metrics)
        self.guard = InstanceGuard(self.store.engine)
        self.hub = MatchHub(self.store, options.start_timeout_s, self.guard.id,
                            cache_bytes=options.replay_cache_bytes)
        self.relay = None if options.broker is None else \
            Relay(options.broker, self.guard.id, self.hub)
        """The link to the fleet's broker, with ``--broker``."""
        self.ladder = Ladder(self.store, self.hub, options.ladder, self.guard, self.relay)
        self.metrics.watch(self.hub, self.ladder)
        self.metrics.identify(self.guard.id, options.worker)
        self.aborted_at_start: list[str] = []
        """Matches left running by a server that died, aborted when this one started."""
        self.health = health.aio.HealthServicer()
        interceptors = [AddressCap(options.limits.max_calls_per_address),
                        TokenInterceptor(self.hub)]
        grpc_options = [*wire.channel_options(), *options.limits.grpc_options()]
        if options.worker is not None:  # the workers share the port (bullring.server.workers)
            grpc_options = [o for o in grpc_options if o[0] != "grpc.so_reuseport"]
            grpc_options.append(("grpc.so_reuseport", 1))
        self.server = grpc.aio.server(interceptors=interceptors, options=grpc_options)
        self.challenges = Challenges(self.hub, self.ladder, options.quotas, options.caps)
        """Practice matches and challenges, with each bot's quotas, for gRPC and HTTP."""
        self.handlers = (BotService(self.hub, self.ladder, options.limits,
                                    self.metrics).handler(),
                         SpectatorService(self.hub, self.metrics).handler(),
                         AdminService(self.store, self.ladder).handler(),
                         LadderService(self.store).handler(),
                         ChallengeService(self.challenges).handler())
        """The handlers of the contract's services (``SERVICES``), one per service."""
        self.server.add_generic_rpc_handlers(self.handlers)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = (*SERVICES, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                 reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, self.server)
        self.port = 0
        self._trimmer: asyncio.Task[None] | None = None
        self.http: HttpServer | None = None
        if options.http_port is not None:
            context = ApiContext(self.hub, self.ladder, human_limit=options.human_matches,
                                 stall_s=options.limits.stall_timeout_s,
                                 caps=options.caps, quotas=options.quotas,
                                 challenges=self.challenges,
                                 metrics=self.metrics, metrics_access=options.metrics)
            self.http = HttpServer(build_app(context), options.host, options.http_port,
                                   options.grace_s, options.limits, token_gate(context),
                                   shared=options.worker is not None)

    async def start(self) -> int:
        """Link to the broker (with one), abort matches left by dead servers, bind and
        start serving, start the ladder; return the port (useful with port 0)."""
        if self.relay is not None:
            await self.relay.start()
        self.aborted_at_start = await asyncio.to_thread(
            self.store.abort_orphans, self.guard.id, self.guard.is_alive)
        if self.aborted_at_start:
            log.warning("aborted %d matches left running by a server that is gone: %s",
                        len(self.aborted_at_start), ", ".join(self.aborted_at_start))
        address = f"{self.options.host}:{self.options.port}"
        try:
            self.port = self.server.add_insecure_port(address)
        except RuntimeError:  # grpc's "Failed to bind" does not say why; a plain bind does
            raise OSError(f"cannot listen on {address} (gRPC): "
                          f"{_bind_error(self.options.host, self.options.port)}") from None
        await self.server.start()
        if self.http is not None:
            self.http.guard.grpc_port = self.port
            try:
                await self.http.start()
            except OSError as exc:
                await self.server.stop(0)
                raise OSError(f"cannot listen on {_url_host(self.options.host)}:"
                              f"{self.options.http_port} (HTTP): {exc.strerror or exc}") from None
        for name in ("", *SERVICES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        await self.ladder.start()
        self._trimmer = asyncio.create_task(
            housekeeping_forever(self.store, self.options.challenge_retention_s),
            name="housekeeping")
        return self.port

    async def stop(self) -> None:
        """Stop gracefully: refuse new calls, abort live matches (stored as aborted)."""
        await self.health.enter_graceful_shutdown()
        if self._trimmer is not None:
            self._trimmer.cancel()
        await self.ladder.stop()
        await self.hub.shutdown()
        if self.relay is not None:
            await self.relay.stop()
        if self.http is not None:
            await self.http.stop()
        # A table seated while the matchmaker was being stopped never got a runner.
        try:
            await asyncio.to_thread(self.store.abort_running, [self.guard.id])
        except DatabaseUnavailableError as exc:
            log.warning("could not mark this server's running matches aborted (%s); the next "
                        "start aborts them", exc)
        await self.server.stop(self.options.grace_s)
        self.guard.close()


async def serve(options: ServerOptions) -> None:
    """Run the server until SIGTERM or SIGINT."""
    server = RefereeServer(options)
    try:
        port = await server.start()
    except BrokerError as exc:
        raise cli.UnreachableError(str(exc)) from None
    except OSError as exc:
        raise cli.UsageError(str(exc)) from None
    admin = await asyncio.to_thread(server.store.ensure_admin_token)
    kept = None if admin is None else _keep_admin_token(
        admin, options.admin_token_file or admin_token_path(options.db), options.db)
    say(f"bullring: listening on {options.host}:{port} (database {options.db})")
    if server.http is not None:
        say(f"bullring: web page and HTTP API on http://{_url_host(options.host)}:"
            f"{server.http.port}/ (OpenAPI: /openapi.json)")
    if kept is not None:
        say(kept)
    say(_welcome(server, f"{options.host}:{port}"))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    say("bullring: shutting down")
    await server.stop()


def say(text: str) -> None:
    """Write ``text`` and its newline to standard output in one write, flushed: the workers
    of ``--workers`` share their supervisor's output, and ``print`` writes the newline
    apart, so two workers' lines could interleave into one (``listening on A listening on
    B``) that a script reading the lines would miscount."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


ADMIN_TOKEN_FILE = "bullring-admin-token"
"""The admin token's file when the database is not a SQLite file (in the working folder)."""


def admin_token_path(db: str) -> Path:
    """Where the first start writes the admin token: beside a SQLite database file, named
    after it (``bullring.db``: ``bullring-admin-token``), else ``./bullring-admin-token``."""
    if db.startswith("sqlite"):
        database = make_url(db).database
        if database and database != ":memory:":
            file = Path(database)
            return file.with_name(f"{file.stem}-admin-token")
    return Path(ADMIN_TOKEN_FILE)


def write_secret(path: Path, text: str) -> None:
    """Write ``text`` and a newline to ``path``, readable and writable by its owner alone
    (mode 0600 from its creation), replacing any file there whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text + "\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _keep_admin_token(token: str, path: Path, db: str) -> str:
    """Write the new admin token to ``path`` (never to the log: anyone who reads the log
    could administer the server); the line that says where it went, or why it could not."""
    shown = str(path) if path.is_absolute() or str(path).startswith(".") else f"./{path}"
    try:
        write_secret(path, token)
    except OSError as exc:
        return (f"bullring: could not write the admin token to {shown} "
                f"({exc.strerror or exc}); make a new one with "
                f"`bullring admin rotate-token --db {db}`")
    return (f"bullring: admin token written to {shown} (mode 0600; only its hash is "
            f"stored): export BULLRING_ADMIN_TOKEN=$(cat {shlex.quote(shown)})")


GC_THRESHOLDS = (50_000, 20, 100)
"""Collect the young generation every 50,000 allocations instead of 700: every decision
allocates hundreds of short-lived objects (messages, futures, handles), and with Python's
defaults the collector ran every few decisions and took a third of the server's time."""


def tune_gc() -> None:
    """Freeze what start-up allocated (never traversed again) and collect less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


MALLOC_ARENAS = 2
"""glibc malloc arenas for the whole process. By default every thread that allocates may get
an arena of its own (up to 8 per core): grpc's threads and the database worker threads each
keep freed memory in theirs, and the server's resident size creeps up for hours."""

TRIM_EVERY_S = 30.0
"""How often freed native memory is handed back to the system (``malloc_trim``) and the
challenges over for longer than their retention are deleted (more often with a retention
shorter than this)."""


def _libc() -> ctypes.CDLL | None:
    """glibc, if this process runs on it."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def tune_malloc() -> None:
    """Cap glibc's malloc arenas (call before threads start); no-op without glibc."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(-8, MALLOC_ARENAS)  # M_ARENA_MAX


async def housekeeping_forever(store: Store, challenge_retention_s: float,
                               every_s: float = TRIM_EVERY_S) -> None:
    """The server's chores, every ``every_s`` (or every ``challenge_retention_s``, if
    shorter): delete the challenges over for longer than their retention, and hand freed
    native memory back to the system (glibc keeps the free pages of its heaps otherwise:
    the 3,000 streams a client opened and closed stay resident after they are gone)."""
    libc = _libc()
    every_s = max(0.5, min(every_s, challenge_retention_s))
    while True:
        await asyncio.sleep(every_s)
        try:
            purged = await asyncio.to_thread(store.purge_challenges, challenge_retention_s)
        except DatabaseUnavailableError as exc:
            log.warning("deleting old challenges: %s; trying again in %s s", exc, every_s)
        else:
            if purged:
                log.info("deleted %d challenges over for more than %g s", purged,
                         challenge_retention_s)
        if libc is not None:
            await asyncio.to_thread(libc.malloc_trim, 0)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _bind_error(host: str, port: int) -> str:
    """Why ``host:port`` cannot be bound, as the system says it (or a general reason)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            return str(exc.strerror or exc)
    return "the address is in use or not available"

def _welcome(server: RefereeServer, address: str) -> str:
    ladder = server.ladder
    games = ", ".join(f"{g} ({s.minimum}-{s.maximum} seats)" if s.minimum != s.maximum
                      else f"{g} ({s.minimum} seats)" for g, s in ladder.sizes.items())
    house = ", ".join(ladder.house) or "none (--house-bots greedy,random,...)"
    db = server.options.db
    game = next(iter(ladder.sizes), "GAME")
    plays = [kind for kind, bot in HOUSE_BOTS.items() if game in getattr(bot, "games", ())]
    bot, other = (f"house:{plays[0]}", "   # or module:Class") if plays else ("module:Class", "")
    return (f"bullring: ladders: {games}; house bots: {house}\n"
            f"bullring: {ladder.house_report()}\n"
            f"bullring: connect a bot:\n"
            f"  bullring bots add NAME --db {db}      # prints the bot's token once\n"
            f"  bullring bot --server {address} --token TOKEN --ladder {game} {bot}"
            f"{other}\n"
            f"bullring: leaderboard: bullring leaderboard --game {game} --db {db}")


class ClientNoise(logging.Filter):
    """Keeps what clients cause from flooding the log. A write that fails because its
    client hung up (grpc's ``ExecuteBatchError``) is the client's doing: logged at DEBUG,
    without its traceback. A refused accept (the process is out of file descriptors) is
    logged once a minute at most, without a traceback, with how many were left out. asyncio
    retries each refused accept a second later, once per connection of the backlog; the
    retries that fire after the listener closed (at shutdown) fail with "Invalid file
    descriptor" and are the same event: logged at DEBUG, without their tracebacks."""

    GONE = "ExecuteBatchError raised in core"
    ACCEPT = "socket.accept() out of system resource"
    RETRY = "BaseSelectorEventLoop._start_serving"
    EVERY_S = 60.0

    def __init__(self) -> None:
        super().__init__()
        self._last = -self.EVERY_S
        self._left_out = 0

    def filter(self, record: logging.LogRecord) -> bool:
        """Demote or throttle the records of the kinds above; pass the rest."""
        message = record.getMessage()
        if self.GONE in message or (self.RETRY in message and _closed_listener(record)):
            if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
                return False
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        elif self.ACCEPT in message:
            now = time.monotonic()
            if now - self._last < self.EVERY_S:
                self._left_out += 1
                return False
            self._last = now
            if self._left_out:
                message += f" ({self._left_out} more in the last minute, not logged)"
                self._left_out = 0
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        else:
            return True
        record.msg, record.args = message, ()
        record.exc_info = record.exc_text = None
        return True


def _closed_listener(record: logging.LogRecord) -> bool:
    """Whether ``record`` carries asyncio's error for a listening socket already closed."""
    error = record.exc_info[1] if record.exc_info else None
    return isinstance(error, ValueError) and "Invalid file descriptor" in str(error)


def check_ports(host: str, ports: Sequence[tuple[str, int | None]]) -> None:
    """Raise a ``UsageError`` naming the option when one of ``ports`` is taken on ``host``,
    before the database is opened, so a start that cannot listen leaves nothing behind
    (port 0 and None are not checked)."""
    for option, port in ports:
        if not port:
            continue
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise cli.UsageError(f"{option}: cannot listen on {host}:{port}: "
                                     f"{exc.strerror or exc}") from None


def main(options: ServerOptions) -> int:
    """Entry point of ``bullring serve``: check the ports, open the database, serve.

    A port in use or a database that cannot be opened ends the start with a ``CommandError``
    (one line) before anything listens."""
    handler = logging.StreamHandler(sys.stderr)  # every record one line, clients' text escaped
    handler.setFormatter(formatter(options.log_format))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    noise = ClientNoise()
    for name in ("grpc._cython.cygrpc", "asyncio"):
        logging.getLogger(name).addFilter(noise)
    if options.broker is not None and options.db.startswith("sqlite"):
        raise cli.UsageError("--broker: a broker links the servers of one PostgreSQL "
                             "database; a SQLite database serves one server")
    if options.worker is None:  # a worker's ports are shared with its siblings on purpose
        check_ports(options.host, [("--port", options.port),
                                   ("--http-port", options.http_port)])
    tune_gc()
    tune_malloc()
    asyncio.run(serve(options))
    return 0
