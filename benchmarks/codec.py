"""What writing a match's messages costs: the codec's writer (bullring.contract.codec, made
from the proto's descriptors) beside building the same PlayResponse as protobuf objects and
serializing it, in the same run.

Run: python benchmarks/codec.py [--games N] [--repeats R]

The messages are every decision request and public event of N random 4-seat games of each
game. Both sides write the very same bytes (tests/unit/test_wire.py); they alternate,
game by game, over the same messages, and the figure is the ratio of their total CPU times
(this thread's), so a slow spell of a shared machine falls on both.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after installed packages

from bullring.contract import codec, messages, wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import get_game


def _messages(game: str, seed: int) -> tuple[list[Any], list[Any]]:
    """Every observation a seat decides on, and every public event, of one random game."""
    state = get_game(game).new_state(4, None, seed)
    rng = random.Random(seed)
    observations: list[Any] = []
    events: list[Any] = list(state.opening)
    while not state.over:
        observations += [state.observation(seat) for seat in state.pending]
        events += state.apply({s: rng.choice(d.legal) for s, d in state.pending.items()})
    return observations, events


def _by_codec(observations: list[Any], events: list[Any]) -> None:
    for o in observations:
        codec.play_bytes(messages.Request("m:1:2", o, 5000))
    for e in events:
        codec.play_bytes(messages.Event(e))


def _by_protobuf(observations: list[Any], events: list[Any]) -> None:
    for o in observations:
        pb.PlayResponse(decision=wire.observation_to_request(o, "m:1:2", 5000)
                        ).SerializeToString()
    for e in events:
        pb.PlayResponse(event=wire.event_to_proto(e)).SerializeToString()


def _cpu(write: Callable[[list[Any], list[Any]], None], game: tuple[list[Any], list[Any]]
         ) -> float:
    start = time.thread_time()
    write(*game)
    return time.thread_time() - start


def main() -> None:
    """Print each game's messages per CPU second by each writer, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"$ python benchmarks/codec.py --games {args.games} --repeats {args.repeats}"
          f"   (load {os.getloadavg()[0]:.1f})")
    print(f"{'game':<10} {'messages':>9} {'codec/s':>10} {'protobuf/s':>11} {'ratio':>6}")
    for name in ("six_nimmt", "no_thanks"):
        games = [_messages(name, seed) for seed in range(args.games)]
        count = sum(len(o) + len(e) for o, e in games)
        ours = theirs = 0.0
        for _ in range(args.repeats):
            for game in games:
                ours += _cpu(_by_codec, game)
                theirs += _cpu(_by_protobuf, game)
        total = count * args.repeats
        print(f"{name:<10} {count:>9} {total / ours:>10,.0f} {total / theirs:>11,.0f} "
              f"{theirs / ours:>5.2f}x")


if __name__ == "__main__":
    main()
