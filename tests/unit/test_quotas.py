"""The caps and quotas in one place (``bullring.server.quotas``) and the shared encodings of
ended matches (``bullring.server.match.archive``), in-process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bullring.referee.registry import get_game
from bullring.server.errors import HourlyQuotaError, SettingOverCapError
from bullring.server.match.archive import Archive
from bullring.server.quotas import HourlyQuota, MatchCaps, Quotas, address_key


def test_a_setting_above_its_cap_is_refused_naming_it_and_the_cap() -> None:
    """Every capped setting is checked, a game's own at what the game declares; a value at
    the cap passes; a setting the game does not declare, or a choice, is not checked; a cap
    below 1 or on a name nothing caps is refused."""
    caps = MatchCaps()
    six_nimmt, no_thanks = get_game("six_nimmt").settings, get_game("no_thanks").settings
    caps.check(10, {"rounds": 10, "end_threshold": 100, "deadline_ms": 60_000,
                    "variant": "standard", "hidden_card": True}, six_nimmt)
    caps.check(10, {"chips": 1000, "end_threshold": 1000}, ())
    assert caps.defaults() == {"seats": 10, "end_threshold": 100, "rounds": 10, "chips": 20,
                               "deadline_ms": 60_000, "max_timeouts": 5,
                               "time_bank_ms": 60_000}
    for name, cap in caps.defaults().items():
        with pytest.raises(SettingOverCapError, match=rf"^{name} is at most {cap} "
                                                      rf".*--match-cap {name}=MAX"):
            caps.check(2, {name: cap + 1}, six_nimmt + no_thanks)
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        MatchCaps.given([("rounds", 0)])
    with pytest.raises(ValueError, match="seats must be at least 1"):
        MatchCaps.given([("seats", 0)])
    with pytest.raises(ValueError, match="no cap on 'colour'; caps: seats, "):
        MatchCaps.given([("colour", 3)])
    with pytest.raises(ValueError, match="0 \\(off\\) or more"):
        Quotas(human_per_hour_per_address=-1)


def test_the_operator_moves_a_cap_by_name_for_every_game_that_has_it() -> None:
    """``--match-cap rounds=3`` caps every game's ``rounds`` at 3, the operator's last word
    counting, and leaves the other caps as the games declare them."""
    caps = MatchCaps.given([("rounds", 5), ("rounds", 3), ("deadline_ms", 2000)])
    assert caps.deadline_ms == 2000 and caps.defaults()["rounds"] == 3
    for game in ("six_nimmt", "no_thanks"):
        declared = get_game(game).settings
        caps.check(4, {"rounds": 3}, declared)
        with pytest.raises(SettingOverCapError, match=r"^rounds is at most 3 "):
            caps.check(4, {"rounds": 4}, declared)
    caps.check(4, {"end_threshold": 100}, get_game("six_nimmt").settings)
    with pytest.raises(SettingOverCapError, match=r"^deadline_ms is at most 2000 "):
        caps.check(4, {"deadline_ms": 2001}, ())


def test_an_address_counts_as_itself_or_its_ipv6_network() -> None:
    """IPv4 addresses and IPv4 in IPv6 count alone; an IPv6 address counts with its /64."""
    assert address_key("203.0.113.9") == "203.0.113.9"
    assert address_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::7") \
        == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key(None) == "unknown"


def test_an_hourly_quota_refuses_past_its_count_with_when_to_try_again() -> None:
    """Three requests of one key pass, the fourth is refused with a Retry-After within the
    hour; another key is counted apart; 0 counts nothing."""
    quota = HourlyQuota(3, "things from this key", "--things-per-hour")
    for _ in range(3):
        quota.take("a")
    with pytest.raises(HourlyQuotaError, match="3 things from this key in the last hour "
                                               "\\(bullring serve --things-per-hour\\)") as over:
        quota.take("a")
    assert 3500 < over.value.retry_after_s <= 3600
    quota.take("b")
    unlimited = HourlyQuota(0, "things", "--x")
    for _ in range(100):
        unlimited.take("a")


def test_readers_of_one_answer_share_one_build_within_the_bound() -> None:
    """Ten readers that come while an answer is built get that one build; a later reader
    gets it kept; None and failures are not kept; past the bound the least recently read
    answer goes first, and an answer larger than the bound is shared but not kept."""
    async def scenario() -> None:
        archive = Archive(max_bytes=3000)
        builds: list[str] = []

        def builder(key: str, size: int) -> Callable[[], Awaitable[str]]:
            async def build() -> str:
                builds.append(key)
                await asyncio.sleep(0.01)
                return "x" * size
            return build

        got = await asyncio.gather(*(archive.get("a", builder("a", 1000)) for _ in range(10)))
        assert builds == ["a"] and len(set(got)) == 1
        await archive.get("a", builder("a", 1000))
        assert builds == ["a"]
        await archive.get("b", builder("b", 1000))
        await archive.get("a", builder("a", 1000))  # read again: the most recent
        await archive.get("c", builder("c", 1000))  # over the bound: b goes
        await archive.get("a", builder("a", 1000))
        await archive.get("b", builder("b", 1000))
        assert builds == ["a", "b", "c", "b"] and archive.size <= 3000

        async def nothing() -> str | None:
            return None
        assert await archive.get("n", nothing) is None

        async def fails() -> str:
            raise LookupError("no such match")
        with pytest.raises(LookupError):
            await archive.get("f", fails)
        huge = await asyncio.gather(*(archive.get("h", builder("h", 5000)) for _ in range(3)))
        assert builds.count("h") == 1 and len(huge) == 3 and archive.size <= 3000

    asyncio.run(scenario())
