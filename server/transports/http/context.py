"""What every HTTP handler reaches: the hub of live matches and the store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import Scope

from bullring.server.challenges.offers import Challenges
from bullring.server.errors import DatabaseUnavailableError, NotAdminError, NotAuthenticatedError
from bullring.server.ladder.seating import Ladder
from bullring.server.match.hub import MatchHub
from bullring.server.metrics import ServerMetrics
from bullring.server.quotas import HourlyQuota, MatchCaps, Quotas
from bullring.server.store import Store
from bullring.server.transports.http.polling import PollSessions
from bullring.server.transports.limits import Limits

bearer = HTTPBearer(auto_error=False, description="a seat token, a registered bot's token, or "
                                                  "the admin token")
"""The ``Authorization: Bearer TOKEN`` scheme (checked by the handlers, never auto-refused)."""


@dataclass(eq=False)
class ApiContext:
    """The server's state the HTTP API works on."""

    hub: MatchHub
    ladder: Ladder | None = None
    """The ladders, which registered bots join over HTTP too."""
    polls: PollSessions = field(default_factory=PollSessions)
    human_limit: int = 8
    """How many matches for people (the web page's "play against the bots") may be open at
    once; 0: none are made."""
    stall_s: float = Limits().stall_timeout_s
    """How long one write of an event stream to a bot may wait for its client to read."""
    caps: MatchCaps = field(default_factory=MatchCaps)
    """The caps on the settings of a match made without the admin token."""
    quotas: Quotas = field(default_factory=Quotas)
    """What one address or bot may ask for, open at once and per hour."""
    human_matches: dict[str, tuple[float, str]] = field(default_factory=dict)
    """The open matches made for people, with when each was made (monotonic seconds) and
    the address that asked for it (``bullring.server.quotas.address_key``)."""
    human_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a match for people is counted and made."""
    human_hourly: HourlyQuota = field(init=False)
    """Matches for people asked for per address in the last hour."""
    challenges: Challenges | None = None
    """The practice and challenge calls, shared with gRPC's ChallengeService (so a bot's
    quotas count its calls on both); None: made here from the ladder."""
    metrics: ServerMetrics = field(default_factory=ServerMetrics)
    """The server's metrics: served at /metrics, and where HTTP streams are counted."""
    metrics_access: str = "admin"
    """Who may read /metrics (``bullring.server.metrics.ACCESS``)."""

    def __post_init__(self) -> None:
        self.human_hourly = HourlyQuota(self.quotas.human_per_hour_per_address,
                                        "matches for people from this address",
                                        "--human-per-hour")
        if self.challenges is None and self.ladder is not None:
            self.challenges = Challenges(self.hub, self.ladder, self.quotas)
        self.polls.gauge = self.metrics.stream("http_long_poll")

    @property
    def store(self) -> Store:
        """The match store."""
        return self.hub.store


def context(request: Request) -> ApiContext:
    """The ApiContext of the app serving ``request``."""
    found: ApiContext = request.app.state.bullring
    return found


Context = Annotated[ApiContext, Depends(context)]
"""A handler parameter that receives the ApiContext."""

Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
"""A handler parameter that receives the bearer credentials, if any."""


def bearer_token(credentials: HTTPAuthorizationCredentials | None) -> str:
    """The bearer token, or a 401 error."""
    if credentials is None or not credentials.credentials.strip():
        raise NotAuthenticatedError(MISSING_TOKEN)
    return credentials.credentials.strip()


async def require_admin(ctx: Context, credentials: Credentials) -> None:
    """Refuse unless the request carries the admin token (401 without one, 403 if wrong):
    the one the server printed at its first start, or ``bullring admin rotate-token``'s."""
    token = bearer_token(credentials)
    if not await asyncio.to_thread(ctx.store.is_admin_token, token):
        raise NotAdminError()


MISSING_TOKEN = "missing 'Authorization: Bearer TOKEN' header"
"""What a request without a bearer token is told."""

TOKEN_ROUTES = ("/api/admin/", "/api/play/", "/api/challenges")
"""Routes that need a bearer token: checked before the request's body is read."""


def token_gate(ctx: ApiContext) -> Callable[[Scope], Awaitable[Exception | None]]:
    """The check ``bullring.server.transports.http.serving.RequestGuard`` makes on a request's
    head, before its
    body is read (so a large or invalid body without a token is refused as unauthorized,
    unread): a token route needs a bearer token, an admin route the admin token."""
    async def gate(scope: Scope) -> Exception | None:
        path: str = scope["path"]
        if not path.startswith(TOKEN_ROUTES):
            return None
        token = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, given = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and given.strip():
                    token = given.strip()
        if token is None:
            return NotAuthenticatedError(MISSING_TOKEN)
        if path.startswith("/api/admin/"):
            try:
                admin = await asyncio.to_thread(ctx.store.is_admin_token, token)
            except DatabaseUnavailableError:
                return None  # the route's own check answers 503 with Retry-After, and logs it
            if not admin:
                return NotAdminError()
        return None
    return gate
