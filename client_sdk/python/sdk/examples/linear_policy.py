"""A 6 nimmt! policy trained in ``bullring.sdk.envs`` and played through the SDK.

The policy scores each legal action by a weighted sum of a few features computed from the
environment's observation vector (``bullring.sdk.envs.encoding``), and plays the best one. The
weights are trained by the cross-entropy method in the Gymnasium env against ``random`` at 2
seats, with NumPy alone, in about a minute on two cores:

    python client_sdk/python/sdk/examples/linear_policy.py --out
    client_sdk/python/sdk/examples/linear_policy.json

``LinearPolicy`` is an ordinary SDK bot that loads the saved weights (beside this file, or the
file named by ``BULLRING_POLICY``) and encodes every observation it is handed with the same
encoder, so it plays in the arena and on the ladder exactly as it was trained:

    bullring arena --game six_nimmt --games 1000 \
        --bots client_sdk/python/sdk/examples/linear_policy.py:LinearPolicy,random
    bullring bot --server HOST:PORT --token TOKEN --ladder six_nimmt \
        bullring.sdk.examples.linear_policy:LinearPolicy
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bullring.referee.core import Action
from bullring.referee.six_nimmt import BULLHEADS, ROW_COUNT, ROW_LIMIT
from bullring.sdk.bot import Bot
from bullring.sdk.envs import SingleAgentEnv, encoder
from bullring.sdk.envs.encoding import ROW_BASE, Encoder

WEIGHTS = Path(__file__).with_suffix(".json")
"""Where the trained weights are saved, and loaded from unless ``BULLRING_POLICY`` names a file."""
CARD_FEATURES = ("bullheads_taken", "gap", "row_length", "card", "below_every_row",
                 "unseen_in_gap", "card_bullheads")
"""What the policy weighs for each card it may play (docs/envs.md)."""
ROW_FEATURES = ("row_bullheads", "row_length")
"""What the policy weighs for each row it may take."""
_BULL = np.array(BULLHEADS, dtype=np.float32)


def card_features(vector: np.ndarray, code: Encoder, cards: np.ndarray) -> np.ndarray:
    """One row of ``CARD_FEATURES`` per card in ``cards``, from an observation ``vector``:
    the bullheads the card takes if placed now, its gap to the row end it follows, that
    row's length, the card itself, whether it is below every row end, the unseen cards
    that could land in its gap first, and the card's own bullheads."""
    parts = code.layout.parts
    rows = vector[parts["rows"]].reshape(ROW_COUNT, ROW_LIMIT).astype(np.int64)
    lengths = (rows > 0).sum(axis=1)
    ends = rows[np.arange(ROW_COUNT), lengths - 1]
    costs = _BULL[rows].sum(axis=1)
    known = (vector[parts["hand"]] + vector[parts["seen"]]) > 0
    unseen = np.concatenate(([0], np.cumsum(~known)))   # unseen[c] = unseen cards below c+1
    below = ends[None, :] < cards[:, None]                          # (cards, rows)
    gaps = np.where(below, cards[:, None] - ends[None, :], 10_000)
    target = gaps.argmin(axis=1)
    low = ~below.any(axis=1)
    length = lengths[target]
    taken = np.where(low, costs.min(), np.where(length >= ROW_LIMIT, costs[target], 0))
    gap = np.where(low, 0, gaps[np.arange(len(cards)), target])
    in_gap = np.where(low, unseen[cards - 1], unseen[cards - 1] - unseen[ends[target]])
    return np.stack([taken, gap / 10, length / ROW_LIMIT, cards / 104, low,
                     in_gap * (length == ROW_LIMIT - 1) / 10, _BULL[cards]], axis=1)


def row_features(vector: np.ndarray, code: Encoder) -> np.ndarray:
    """One row of ``ROW_FEATURES`` per row: its bullheads and its length."""
    rows = vector[code.layout.parts["rows"]].reshape(ROW_COUNT, ROW_LIMIT).astype(np.int64)
    return np.stack([_BULL[rows].sum(axis=1), (rows > 0).sum(axis=1) / ROW_LIMIT], axis=1)


def choose(weights: np.ndarray, vector: np.ndarray, mask: np.ndarray, code: Encoder) -> int:
    """The action index the policy plays: the legal action of the highest score (a card's
    or a row's features times their weights; the lowest legal index otherwise)."""
    legal = np.flatnonzero(mask)
    play, row = weights[:len(CARD_FEATURES)], weights[len(CARD_FEATURES):]
    if legal[0] >= ROW_BASE:
        return int(ROW_BASE + (row_features(vector, code) @ row).argmax())
    if vector[code.layout.parts["kind"].start] == 0:   # not a card to play: a draft
        return int(legal[0])
    return int(legal[(card_features(vector, code, legal) @ play).argmax()])


def load(path: Path | None = None) -> np.ndarray:
    """The weights saved at ``path`` (default: ``BULLRING_POLICY`` or ``WEIGHTS``)."""
    path = path or Path(os.environ.get("BULLRING_POLICY", WEIGHTS))
    saved = json.loads(path.read_text())
    if saved["card_features"] != list(CARD_FEATURES) or \
            saved["row_features"] != list(ROW_FEATURES):
        raise ValueError(f"{path} holds weights of other features than this policy's")
    return np.array(saved["weights"], dtype=np.float64)


class LinearPolicy(Bot):
    """Plays 6 nimmt! with the trained weights, on the encoder's vector of each observation."""

    name = "linear_policy"
    games = ("six_nimmt",)

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.weights = load()
        self.encoders: dict[int, Encoder] = {}

    def decide(self, observation: Any) -> Action:
        """Encode the observation as the env does, choose an index, and answer with it."""
        seats = len(observation.totals)
        code = self.encoders.get(seats)
        if code is None:
            code = self.encoders[seats] = encoder("six_nimmt", seats)
        index = choose(self.weights, code.vector(observation), code.mask(observation), code)
        return code.action(observation.decision, index)


# ------------------------------------------------------------------------------- training


def evaluate(weights: np.ndarray, env: SingleAgentEnv, seeds: list[int]) -> float:
    """Mean margin (the opponent's total minus the policy's) over one game per seed."""
    margin = 0.0
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            index = choose(weights, obs["observation"], obs["action_mask"], env.encoder)
            obs, _reward, done, _truncated, info = env.step(index)
        totals = info["totals"]
        margin += sum(totals) - 2 * totals[env.seat]
    return margin / len(seeds)


def train(iterations: int = 12, population: int = 24, games: int = 16, elite: int = 5,
          seed: int = 0, log: Any = print) -> np.ndarray:
    """Cross-entropy method: sample weight vectors around a mean, keep the ``elite`` that
    beat ``random`` by the most over the same ``games`` (two per seat), refit, repeat."""
    rng = np.random.default_rng(seed)
    env = SingleAgentEnv("six_nimmt", ["random"], seat=0)
    twin = SingleAgentEnv("six_nimmt", ["random"], seat=1)
    size = len(CARD_FEATURES) + len(ROW_FEATURES)
    mean, std = np.zeros(size), np.ones(size)
    for iteration in range(iterations):
        seeds = [int(s) for s in rng.integers(0, 2**62, games // 2)]
        samples = mean + std * rng.standard_normal((population, size))
        scores = np.array([(evaluate(w, env, seeds) + evaluate(w, twin, seeds)) / 2
                           for w in samples])
        best = samples[np.argsort(scores)[-elite:]]
        mean, std = best.mean(axis=0), best.std(axis=0) + 0.05
        log(f"iteration {iteration + 1}/{iterations}: best margin {scores.max():+.1f}, "
            f"elite mean {np.sort(scores)[-elite:].mean():+.1f}")
    return mean


def save(weights: np.ndarray, path: Path, seconds: float, games: int) -> None:
    """Write the weights with the names of their features and how they were trained."""
    path.write_text(json.dumps({
        "game": "six_nimmt", "card_features": list(CARD_FEATURES),
        "row_features": list(ROW_FEATURES), "weights": [round(float(w), 6) for w in weights],
        "trained": {"method": "cross-entropy", "opponent": "random", "seats": 2,
                    "games": games, "seconds": round(seconds, 1)},
    }, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Train the weights, save them, and print how long it took."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--population", type=int, default=24)
    parser.add_argument("--games", type=int, default=16, help="games per weight vector")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.monotonic()
    weights = train(args.iterations, args.population, args.games, seed=args.seed)
    seconds = time.monotonic() - start
    played = args.iterations * args.population * (args.games // 2) * 2
    save(weights, args.out, seconds, played)
    print(f"trained on {played} games in {seconds:.0f} s; saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
