"""Secrets over HTTP: the live feed (Server-Sent Events), every browse API response taken
while a real match runs, and what HTTP play sends each seat, checked against the stored
replay for facts the rules hide (docs/rules.md §4): a hand, a choice before its reveal, a No
Thanks! chip count, a hidden or removed card, the seed."""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import httpx
from google.protobuf import json_format

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from tests.e2e.test_stream_leaks import (
    PUBLIC_EVENTS,
    check_no_thanks_seats,
    check_six_nimmt_seats,
    secret_free,
)
from tests.serving import ServerProcess

SECRET_KEYS = {"seed", "hand", "hands", "chips", "hidden", "hidden_card", "removed", "deck",
               "token", "token_hash", "replay_json", "settings_json"}


def keys_in(value: Any) -> set[str]:
    """Every object key anywhere inside a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


def read_feed(base: str, match_id: str, into: list[tuple[str, dict[str, Any]]]) -> None:
    """Record the match's public SSE feed, (event name, data), until its end."""
    with httpx.Client(base_url=base, timeout=60) as client, \
            client.stream("GET", f"/api/matches/{match_id}/feed") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name, data = "message", []
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                into.append((name, json.loads("\n".join(data))))
                if name == "match_ended":
                    return
                name, data = "message", []


def typed_event(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The engine event a feed message (a WatchResponse in proto JSON) carries: its name,
    one of the public events, and its fields."""
    event = wire.event_from_proto(json_format.ParseDict(data, pb.WatchResponse()).event)
    assert type(event).__name__ in PUBLIC_EVENTS
    return type(event).__name__, event._asdict()


class Recorder:
    """Plays every seat over HTTP with random answers, recording what each seat got and
    snapshots of the browse API taken after each of seat 0's answers."""

    def __init__(self, server: ServerProcess, match_id: str, tokens: list[str | None]) -> None:
        self.base = server.http
        self.match_id = match_id
        self.tokens = [str(t) for t in tokens]
        self.seen: list[list[dict[str, Any]]] = [[] for _ in tokens]
        self.snapshots: list[tuple[str, int, Any]] = []
        self.after: list[int] = [0] * len(tokens)

    def join(self) -> None:
        """Join every seat (the match starts)."""
        with httpx.Client(base_url=self.base, timeout=30) as client:
            for seat, token in enumerate(self.tokens):
                result = client.get("/api/play/poll", params={"wait_ms": 0},
                                    headers={"Authorization": f"Bearer {token}"}).json()
                self.seen[seat].extend(result["messages"])
                self.after[seat] = result["messages"][-1]["seq"]

    def snapshot(self, client: httpx.Client) -> None:
        """GET every browse endpoint while the match runs."""
        for path in ("/api/matches", f"/api/matches/{self.match_id}",
                     f"/api/matches/{self.match_id}/replay", "/api/leaderboard",
                     "/api/leaderboard?game=no_thanks", "/api/bots", "/api/games",
                     "/api/matches?bot=seat0&status=running"):
            response = client.get(path)
            self.snapshots.append((path, response.status_code, response.json()))

    def play(self, seat: int) -> None:
        """Answer ``seat``'s decisions at random until the match ends."""
        rng = random.Random(seat)
        headers = {"Authorization": f"Bearer {self.tokens[seat]}"}
        with httpx.Client(base_url=self.base, timeout=30) as client:
            while True:
                result = client.get("/api/play/poll", headers=headers, params={
                    "after": self.after[seat], "wait_ms": 10_000}).json()
                for message in result["messages"]:
                    self.after[seat] = message["seq"]
                    self.seen[seat].append(message)
                    if "match_ended" in message:
                        return
                    if "decision" in message:
                        decision = message["decision"]
                        if seat == 0:
                            self.snapshot(client)
                        verdict = client.post("/api/play/answer", headers=headers, json={
                            "decision_id": decision["decision_id"],
                            "action": rng.choice(decision["legal"])}).json()
                        assert "accepted" in verdict, verdict


def record(server: ServerProcess, game: str, seats: int, *args: str
           ) -> tuple[dict[str, Any], Recorder, list[tuple[str, dict[str, Any]]]]:
    """Play a real match over HTTP play while recording a spectator's feed; the replay."""
    match = server.create_match(game, seats, "--deadline-ms", "20000", *args)
    recorder = Recorder(server, match.match_id, match.tokens)
    recorder.join()
    feed: list[tuple[str, dict[str, Any]]] = []
    spectator = threading.Thread(target=read_feed, args=(server.http, match.match_id, feed))
    spectator.start()
    players = [threading.Thread(target=recorder.play, args=(s,)) for s in range(seats)]
    for thread in players:
        thread.start()
    for thread in [*players, spectator]:
        thread.join(120)
        assert not thread.is_alive()
    replay: dict[str, Any] = httpx.get(f"{server.http}/api/matches/{match.match_id}/replay"
                                       ).json()
    assert replay["termination"] == "normal"
    return replay, recorder, feed


def as_proto(messages: list[dict[str, Any]]) -> list[pb.PlayResponse]:
    """HTTP play messages back as the PlayResponse protobuf they were made from."""
    return [json_format.ParseDict({k: v for k, v in m.items() if k != "seq"},
                                  pb.PlayResponse()) for m in messages]


def check_snapshots(recorder: Recorder) -> None:
    """Browse responses during play: no secret key anywhere, no result or replay yet."""
    assert len(recorder.snapshots) > 40
    for path, status, body in recorder.snapshots:
        assert not keys_in(body) & SECRET_KEYS, (path, keys_in(body) & SECRET_KEYS)
        if path.endswith("/replay"):
            assert status == 409 and body["error"]["code"] == "match_not_finished"
            continue
        assert status == 200, (path, body)
        listed = [] if not isinstance(body, dict) else \
            body.get("matches", [body] if "status" in body else [])
        for match in listed:
            if match["status"] == "running":
                assert match["totals"] is None and match["ranks"] is None


def test_six_nimmt_over_http_shows_no_hand_or_unrevealed_choice(server: ServerProcess
                                                               ) -> None:
    """The live feed never carries a card still in a hand (so neither a hand nor a choice
    before its reveal); HTTP play shows a seat only its own hand; browse responses during
    the match hold no seed, hand or result."""
    replay, recorder, feed = record(server, "six_nimmt", 3, "--setting", "rounds=2")
    assert check_six_nimmt_seats(replay, [as_proto(m) for m in recorder.seen]) > 30
    check_snapshots(recorder)
    assert feed[-1][0] == "match_ended"
    assert feed[-1][1]["match_ended"]["totals"] == replay["totals"]
    round_, tricks = -1, 0
    for name, data in feed[:-1]:
        assert name == "event"
        kind, event = typed_event(data)
        if kind == "RoundStarted":
            round_, tricks = event["round"], 0
        elif kind == "CardsRevealed":
            tricks = event["trick"] + 1  # these plays are public from now on
        hands = replay["rounds"][round_]["hands"]
        played = [t["plays"] for t in replay["rounds"][round_]["tricks"][:tricks]]
        held = {c for seat, hand in enumerate(hands) for c in hand} - \
            {p[seat] for p in played for seat in range(len(hands))}
        cards = {c for key in ("rows", "rows_after", "taken")
                 for group in event.get(key) or () for c in group} | \
            set(event.get("plays") or ())
        assert not cards & held, (event, cards & held)


def test_no_thanks_over_http_shows_no_chips_hidden_or_removed_card(server: ServerProcess
                                                                  ) -> None:
    """The live feed and browse responses never show a chip count, a hidden card before its
    reveal or a removed card; HTTP play shows a seat only its own chips and hidden card."""
    replay, recorder, feed = record(server, "no_thanks", 4, "--setting", "hidden_card=true")
    check_no_thanks_seats(replay, [as_proto(m) for m in recorder.seen])
    check_snapshots(recorder)
    round_ = replay["rounds"][0]
    never_dealt = set(round_["removed"]) - set(round_["hidden"])
    revealed: set[int] = set()
    for name, data in feed[:-1]:
        assert name == "event"
        kind, event = typed_event(data)
        secret_free(event)
        card = event.get("card")
        if kind == "HiddenRevealed":
            revealed.add(event["card"])
        assert card not in never_dealt
        assert card not in set(round_["hidden"]) - revealed
