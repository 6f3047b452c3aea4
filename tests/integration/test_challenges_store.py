"""Challenges and practice matches in the store, on SQLite and on the real PostgreSQL:
answers, the first decline ending a challenge, seating claims, and an unrated end."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import create_engine, text

from bullring.server.errors import (
    ConflictError,
    ForbiddenError,
    InvalidChallengeError,
    NotFoundError,
    OpenQuotaError,
)
from bullring.server.store import Store
from bullring.server.store.migrate import upgrade


def replay_of(match_id: str, ranks: list[int]) -> dict[str, Any]:
    """The parts of a replay the store reads."""
    return {"match_id": match_id, "termination": "normal", "ranks": ranks,
            "totals": [r * 10 for r in ranks]}


@pytest.fixture
def store(db: str) -> Store:
    """A Store on a fresh database of each backend, with three registered bots and a house
    bot."""
    opened = Store(db)
    for name in ("ann", "bob", "cy"):
        opened.add_bot(name, owner="tests")
    opened.ensure_house_bot("house-greedy", "greedy")
    return opened


def test_a_practice_match_against_house_bots_is_accepted_seated_and_never_rated(
        store: Store) -> None:
    """With only house bots named there is no one to ask: accepted at once; seated, it
    claims the challenger, its house seats are played by the server (a registered house
    bot's name stands for its kind) and its end writes no rating."""
    made = store.create_challenge("six_nimmt", "ann", ["house:random", "house-greedy"])
    assert made.status == "accepted" and made.opponents == ("house:random", "house:greedy")
    assert store.ready_challenges("six_nimmt") == [made]
    assert store.ready_challenges("no_thanks") == []
    match_id = store.seat_challenge(made, {"rounds": 1}, 5,
                                    ["ann", "house:random", "house:greedy"], "me")
    assert match_id is not None
    assert store.bot("ann").current_match == match_id
    assert store.bot("house-greedy").current_match is None  # the ladder's house bot is free
    config = store.match_config(match_id)
    assert config.rated is False and config.house == {1: "random", 2: "greedy"}
    assert store.challenge(made.id).status == "started"
    assert store.challenge(made.id).match_id == match_id
    assert store.seat_challenge(made, {}, 5, ["ann", "x", "y"], "me") is None  # once only
    assert store.finish_match(match_id, replay_of(match_id, [1, 2, 3]))
    assert store.rating_changes(match_id=match_id) == []
    assert store.leaderboard("six_nimmt") == []
    page, _ = store.match_page(match_id=match_id)
    assert page[0].status == "finished" and page[0].rated is False
    assert store.bot("ann").current_match is None


def test_a_ladder_match_is_rated(store: Store) -> None:
    """Next to it, a ladder table is stored rated and its end rates its seats."""
    match_id = store.seat_ladder_match("six_nimmt", {}, 7, ["ann", "bob", "cy"], "me")
    assert match_id is not None and store.match_config(match_id).rated
    assert store.finish_match(match_id, replay_of(match_id, [1, 2, 3]))
    assert len(store.rating_changes(match_id=match_id)) == 3
    assert store.match_page(match_id=match_id)[0][0].rated


def test_a_challenge_waits_for_every_named_bot_and_the_first_decline_ends_it(
        store: Store) -> None:
    """A challenge naming bots is pending until each accepts; a decline ends it with who
    declined and why, after which nobody can answer it; only a named bot may answer."""
    made = store.create_challenge("six_nimmt", "ann", ["bob", "cy"])
    assert made.status == "pending" and made.answers == {"bob": "pending", "cy": "pending"}
    assert [c.id for c in store.challenges("bob")] == [made.id]
    assert [c.id for c in store.challenges("ann")] == [made.id]
    with pytest.raises(ForbiddenError, match="does not name 'house-greedy'"):
        store.answer_challenge(made.id, "house-greedy", True)
    assert store.answer_challenge(made.id, "bob", True).status == "pending"
    declined = store.answer_challenge(made.id, "cy", False, "busy tuning")
    assert declined.status == "declined" and declined.message == "declined by cy: busy tuning"
    assert store.challenge(made.id).answers == {"bob": "accepted", "cy": "declined"}
    with pytest.raises(ConflictError, match="is declined"):
        store.answer_challenge(made.id, "bob", True)
    assert store.ready_challenges("six_nimmt") == []


def test_accepted_by_all_or_by_auto_accept_it_is_ready(store: Store) -> None:
    """A bot set to auto-accept accepts when named; the last acceptance makes it ready."""
    store.set_auto_accept("cy", True)
    made = store.create_challenge("six_nimmt", "ann", ["bob", "cy"])
    assert made.answers == {"bob": "pending", "cy": "accepted"}
    assert store.answer_challenge(made.id, "bob", True).status == "accepted"
    assert [c.id for c in store.ready_challenges("six_nimmt")] == [made.id]
    assert store.create_challenge("six_nimmt", "bob", ["cy"]).status == "accepted"


def test_the_challenger_may_withdraw_it_and_bad_names_are_refused(store: Store) -> None:
    """Its challenger cancels it until it starts; unknown, repeated or disabled bots are
    refused with the status to answer."""
    made = store.create_challenge("six_nimmt", "ann", ["bob"])
    cancelled = store.answer_challenge(made.id, "ann", False, "changed my mind")
    assert cancelled.status == "cancelled" and "cancelled by ann" in cancelled.message
    with pytest.raises(NotFoundError, match="no bot named 'zed'"):
        store.create_challenge("six_nimmt", "ann", ["zed"])
    with pytest.raises(InvalidChallengeError, match="named twice"):
        store.create_challenge("six_nimmt", "ann", ["bob", "bob"])
    with pytest.raises(InvalidChallengeError, match="named twice"):
        store.create_challenge("six_nimmt", "ann", ["ann"])
    store.set_enabled("cy", False)
    with pytest.raises(ConflictError, match="disabled"):
        store.create_challenge("six_nimmt", "ann", ["cy"])
    with pytest.raises(NotFoundError, match="no challenge"):
        store.challenge("nope")


def test_a_busy_bot_is_not_seated_twice(store: Store) -> None:
    """A bot seated in a ladder match cannot be claimed by a challenge meanwhile: nothing is
    written and the challenge stays accepted, to be seated once the bot is free."""
    made = store.create_challenge("six_nimmt", "ann", ["house:random"])
    busy = store.seat_ladder_match("six_nimmt", {}, 7, ["ann", "bob"], "me")
    assert busy is not None
    assert store.seat_challenge(made, {}, 5, ["ann", "house:random"], "me") is None
    assert store.challenge(made.id).status == "accepted"
    store.finish_match(busy, replay_of(busy, [1, 2]))
    assert store.seat_challenge(made, {}, 5, ["ann", "house:random"], "me") is not None


def test_upgrading_marks_the_ladder_matches_stored_before_as_rated(db: str) -> None:
    """A database at the first revision keeps its ladder matches rated after the upgrade
    (and its other matches unrated)."""
    engine = create_engine(db)
    upgrade(engine, "0001")
    with engine.begin() as connection:
        for match_id, ladder in (("lad", True), ("tok", False)):
            connection.execute(text(
                "INSERT INTO match (id, game, settings_json, seed, seat_count, status, "
                "created_at, ladder) VALUES (:id, 'six_nimmt', '{}', 1, 4, 'created', "
                "CURRENT_TIMESTAMP, :ladder)"), {"id": match_id, "ladder": ladder})
    engine.dispose()
    store = Store(db)
    assert store.match_config("lad").rated and not store.match_config("tok").rated


def test_a_challengers_waiting_challenges_are_counted_under_a_lock(store: Store) -> None:
    """With ``open_limit`` 2, ann's third waiting challenge (pending or accepted, not yet
    seated) is refused with OpenQuotaError; a declined one no longer waits, so ann may ask
    again; cy's count is its own."""
    store.create_challenge("six_nimmt", "ann", ["bob"], open_limit=2)
    practice = store.create_challenge("six_nimmt", "ann", ["house:random"], open_limit=2)
    assert practice.status == "accepted"
    with pytest.raises(OpenQuotaError, match="ann has 2 challenges waiting") as over:
        store.create_challenge("six_nimmt", "ann", ["cy"], open_limit=2)
    assert over.value.retry_after_s > 0
    store.create_challenge("six_nimmt", "cy", ["bob"], open_limit=2)
    first = store.challenges("ann")[-1]
    store.answer_challenge(first.id, "bob", False)
    assert store.create_challenge("six_nimmt", "ann", ["cy"], open_limit=2).status == "pending"


def test_a_bots_list_reads_its_own_challenges_and_old_ones_are_purged(store: Store) -> None:
    """bob's list holds the challenges naming it (as challenger or opponent), newest first,
    and no other; purging deletes the challenges over for longer than the retention (a
    started one keeps its match), never a waiting one."""
    declined = store.create_challenge("six_nimmt", "ann", ["bob"])
    store.answer_challenge(declined.id, "bob", False)
    practice = store.create_challenge("six_nimmt", "ann", ["house:random"])
    match_id = store.seat_challenge(practice, {"rounds": 1}, 5, ["ann", "house:random"], "me")
    assert match_id is not None
    waiting = store.create_challenge("six_nimmt", "cy", ["bob"])
    other = store.create_challenge("six_nimmt", "cy", ["house:random"])
    assert [c.id for c in store.challenges("bob")] == [waiting.id, declined.id]
    assert [c.id for c in store.challenges("ann")] == [practice.id, declined.id]
    assert store.purge_challenges(3600) == 0
    assert store.purge_challenges(0) == 2
    assert [c.id for c in store.challenges("ann")] == []
    assert [c.id for c in store.challenges("cy")] == [other.id, waiting.id]
    with pytest.raises(NotFoundError):
        store.challenge(practice.id)
    assert store.match_config(match_id).rated is False


def test_upgrading_lists_each_stored_challenge_under_its_bots(db: str) -> None:
    """A database at revision 0006 with a challenge of ann against bob and a house bot:
    upgraded, the challenge is in ann's and bob's lists and nobody else's."""
    engine = create_engine(db)
    upgrade(engine, "0006")
    with engine.begin() as connection:
        for name in ("ann", "bob", "cy"):
            connection.execute(text(
                "INSERT INTO bot (name, owner, version, enabled, created_at, auto_accept) "
                "VALUES (:name, '', 1, true, CURRENT_TIMESTAMP, false)"), {"name": name})
        connection.execute(text(
            "INSERT INTO challenge (id, game, challenger, opponents_json, answers_json, "
            "status, message, created_at, updated_at) VALUES ('c1', 'six_nimmt', 'ann', "
            "'[\"bob\", \"house:greedy\"]', '{\"bob\": \"pending\"}', 'pending', '', "
            "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
    engine.dispose()
    store = Store(db)
    assert [c.id for c in store.challenges("ann")] == ["c1"]
    assert [c.id for c in store.challenges("bob")] == ["c1"]
    assert store.challenges("cy") == []
