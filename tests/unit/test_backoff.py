"""The one backoff the runner's reconnects and the store's database retries share."""

from __future__ import annotations

import random

from bullring.sdk.backoff import Backoff
from bullring.sdk.runner import RECONNECT


def test_pauses_double_up_to_the_cap() -> None:
    """Without jitter: first, first x factor, ... then the cap for good."""
    backoff = Backoff(first_s=0.1, max_s=1.0)
    assert [backoff.pause(n) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]


def test_jitter_only_shortens_and_stays_within_its_share() -> None:
    """With jitter j each pause lies in [(1 - j) x base, base], and it varies."""
    backoff = Backoff(first_s=0.05, max_s=2.0, jitter=0.5, rng=random.Random(1))
    for failures in range(1, 12):
        base = min(2.0, 0.05 * 2 ** (failures - 1))
        pauses = {backoff.pause(failures) for _ in range(50)}
        assert all(0.5 * base <= p <= base for p in pauses)
        assert len(pauses) > 1


def test_the_runner_reconnects_from_50_ms_to_2_s() -> None:
    """The runner's reconnect pauses: 50 ms doubling to 2 s, shortened by up to half."""
    assert (RECONNECT.first_s, RECONNECT.max_s, RECONNECT.factor, RECONNECT.jitter) == (
        0.05, 2.0, 2.0, 0.5)
