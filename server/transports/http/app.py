"""The FastAPI application: the JSON API, its OpenAPI document and the web page."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import UnknownGameError, get_game
from bullring.server.tournaments.live import DEFAULT_MAX_SCHEDULED
from bullring.server.transports.http import (
    admin,
    browse,
    challenges,
    errors,
    feed,
    human,
    metrics,
    play,
    proto_schema,
    setup_schema,
    tournaments,
    tv,
)
from bullring.server.transports.http.context import ApiContext

WEB = Path(__file__).resolve().parents[2] / "web"
"""The web page's static files (no build step)."""

DESCRIPTION = """\
Bullring's HTTP API: leaderboard, bots, matches, replays, a live public feed of each match
(Server-Sent Events), HTTP play for bots without gRPC, matches for a person in the browser,
practice matches and challenges, and admin operations.

Every error is JSON: `{"error": {"code": "stable_code", "message": "..."}}`.
Seat tokens, registered bots' tokens and the admin token go in `Authorization: Bearer TOKEN`.
"""


def build_app(ctx: ApiContext) -> FastAPI:
    """The HTTP application over ``ctx``'s hub and store."""
    app = FastAPI(title="Bullring", version="1", description=DESCRIPTION,
                  docs_url=None, redoc_url=None)
    app.state.bullring = ctx
    errors.install(app)
    for module in (browse, feed, play, human, challenges, tournaments, tv, admin):
        app.include_router(module.router)
    if ctx.metrics_access != "off":
        app.include_router(metrics.router)

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(WEB / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/tv", include_in_schema=False)
    async def big_screen() -> FileResponse:
        """The big screen: the featured game followed by itself, paced for people
        (docs/tv.md)."""
        return FileResponse(WEB / "tv.html", headers={"Cache-Control": "no-cache"})

    @app.get("/api/docs", include_in_schema=False)
    async def docs() -> FileResponse:
        """The API's reference, drawn in the browser from /openapi.json by the page's own
        script (nothing is loaded from another site)."""
        return FileResponse(WEB / "docs.html", headers={"Cache-Control": "no-cache"})

    @app.get("/games/{game}/view.js", include_in_schema=False)
    async def game_view(game: str) -> Response:
        """The script the web page draws ``game`` with, read from the game's own package
        (``GameSpec.web_view``); 404 for a game drawn by the page's generic view."""
        spec = get_game(browse.game_id(game))
        if spec.web_view is None:
            raise UnknownGameError(f"{spec.id} has no view of its own: the page draws it "
                                   f"with its generic view")
        package, name = spec.web_view
        script = files(package).joinpath(name).read_bytes()
        return Response(script, media_type="text/javascript",
                        headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=WEB), name="static")
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, with every error response in our JSON shape (not the
    framework's 422 shape, nor an event stream's media type)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description,
                         routes=app.routes)
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            for status, response in operation.get("responses", {}).items():
                if status.startswith(("4", "5")):  # errors are JSON, whatever the route sends
                    response["content"] = {"application/json": {"schema": error_ref}}
                    if status == "422":
                        response["description"] = "invalid_request"
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    components.setdefault("ErrorBody", errors.ErrorBody.model_json_schema(
        ref_template="#/components/schemas/{model}"))
    components.setdefault("ErrorDetail", errors.ErrorDetail.model_json_schema())
    _contract_schemas(schema)
    ctx: ApiContext = app.state.bullring
    components["CreateMatchIn"] = setup_schema.create_match_schema(components["CreateMatchIn"])
    components["HumanMatchIn"] = setup_schema.human_match_schema(components["HumanMatchIn"],
                                                                 ctx.caps)
    components["ChallengeIn"] = setup_schema.challenge_schema(components["ChallengeIn"],
                                                              ctx.caps)
    most = DEFAULT_MAX_SCHEDULED if ctx.ladder is None else ctx.ladder.tournaments.max_scheduled
    components["TournamentIn"] = setup_schema.tournament_schema(components["TournamentIn"], most)
    app.openapi_schema = schema
    return schema


PLAY_MESSAGES = (pb.PlayResponse, pb.WatchResponse, pb.SubmitAnswerResponse, pb.PublicEvent)
"""The contract's messages the HTTP API sends (every message they hold comes too)."""
STREAMS = {"/api/play/stream": pb.PlayResponse.DESCRIPTOR,
           "/api/matches/{match_id}/feed": pb.WatchResponse.DESCRIPTOR}
"""The Server-Sent Events routes and the message each event's data holds."""


def _contract_schemas(schema: dict[str, Any]) -> None:
    """Name the contract's messages in ``schema`` (proto3 JSON, from the .proto with its
    comments) and describe the play and feed payloads with them: the decision request,
    every event, the verdict, the poll result and the stream messages."""
    components = schema["components"]["schemas"]
    components.update(proto_schema.schemas(m.DESCRIPTOR for m in PLAY_MESSAGES))
    components["Verdict"] = {**components["SubmitAnswerResponse"], "description": (
        "The verdict on an answer, in-band with HTTP 200: accepted, or rejected with a reason "
        "and a message (the gRPC SubmitAnswerResponse).")}
    components["PollMessage"] = {
        "description": "One message for the seat: a PlayResponse in proto3 JSON, numbered.",
        "allOf": [proto_schema.ref("PlayResponse"), {
            "type": "object", "required": ["seq"], "properties": {"seq": {
                "type": "integer", "description": "This message's number on the seat's "
                "connection; poll with after=seq to acknowledge it and get newer ones."}}}]}
    poll = components["PollResult"]
    poll["properties"]["messages"] = {
        "type": "array", "items": proto_schema.ref("PollMessage"),
        "description": "The messages numbered above 'after', oldest first."}
    for path, message in STREAMS.items():
        names = [field.name for field in message.oneofs_by_name["body"].fields]
        name = message.name
        ok = schema["paths"][path]["get"]["responses"]["200"]
        ok["description"] = (f"Server-Sent Events, each one {name}: the event name is the "
                             f"{name}'s body ({', '.join(names)}), the data is the {name} in "
                             f"proto3 JSON, the id numbers the events.")
        ok["content"] = {"text/event-stream": {"schema": _sse_event(name, names)}}


def _sse_event(message: str, names: list[str]) -> dict[str, Any]:
    """The schema of one Server-Sent Event carrying ``message`` (each event of a stream, as
    OpenAPI 3.1 reads a text/event-stream schema): its name, its JSON data, its number."""
    return {"type": "object", "required": ["event", "data"], "properties": {
        "event": {"type": "string", "enum": names,
                  "description": f"the {message}'s body: which of its fields is set"},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": proto_schema.ref(message),
                 "description": f"the {message} in proto3 JSON"},
        "id": {"type": "string", "pattern": "^[0-9]+$",
               "description": "the event's number (a match's end has none on the feed)"}}}
