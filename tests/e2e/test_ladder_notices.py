"""What wakes a server's matchmaker on PostgreSQL: a live tournament or an accepted
challenge written to the database by another process (``bullring tournament --db``, another
server) is seated at once by the server whose bots wait, though that server reads its live
tournaments and accepted challenges only when told of a change (a notice on
``bullring_bots_freed`` naming what changed)."""

from __future__ import annotations

from bullring.server.store import Store
from bullring.server.tournaments.live import create_tournament
from tests.databases import fresh_postgres
from tests.ladder_helpers import LadderBot, LadderServer

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=300"]
"""Short 6 nimmt! matches at the default tables of four: two bots seat no rated table."""


def test_a_tournament_and_a_challenge_written_by_another_process_are_seated(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """ann and bob wait on a PostgreSQL ladder whose tables need four (the matchmaker has
    looked and found no tournament and no challenge). A tournament of them created in the
    database by another process is seated by the server; so is, once it is over, a
    challenge bob accepts (auto-accept) written there too. Neither is told to the server
    but by the database."""
    with fresh_postgres() as url:
        server = LadderServer(url, FAST).start()
        stop_all.append(server)
        assert server.log is not None
        tokens = {name: server.add_bot(name) for name in ("ann", "bob")}
        bots = {name: LadderBot.start(name, server.address, tokens[name], "six_nimmt",
                                      "house:greedy") for name in tokens}
        stop_all.extend(bots.values())
        for bot in bots.values():
            bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln
                                           for ln in lines), 30, "the bot to wait")
        store = Store(url)
        try:
            row = create_tournament(store, "six_nimmt", "round-robin", ["ann", "bob"],
                                    games=1, seats=2, wait_s=30.0)
            server.log.wait(lambda lines: any(f"tournament {row.id} finished" in ln
                                              for ln in lines),
                            60, "the tournament made in the database to be played")
            store.set_auto_accept("bob", True)
            made = store.create_challenge("six_nimmt", "ann", ["bob"])
            assert made.status == "accepted"
            server.log.wait(lambda lines: any(f"of challenge {made.id}" in ln
                                              for ln in lines),
                            30, "the challenge accepted in the database to be seated")
        finally:
            store.engine.dispose()
            for bot in bots.values():
                bot.stop()
            server.stop()  # before its database is dropped
