"""The trained example policy (client_sdk/python/sdk/examples/linear_policy.py): it trains, saves
and
loads, and the weights in the repository beat ``random`` in the arena."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bullring.sdk import arena
from bullring.sdk.arena import ArenaConfig
from bullring.sdk.envs import SingleAgentEnv
from bullring.sdk.envs.encoding import ROW_BASE
from bullring.sdk.examples import linear_policy

EXAMPLE = Path(linear_policy.__file__).resolve()
SPEC = f"{EXAMPLE}:LinearPolicy"


def test_the_saved_policy_beats_random_over_1000_games_at_two_seats() -> None:
    """The saved weights win at least 55% of 1,000 two-seat arena games against ``random``
    (the arena's own win share: ties split, seats rotated game by game)."""
    config = ArenaConfig("six_nimmt", (SPEC, "random"), 1000, seed=1)
    table = {s.bot: s for s in arena.standings(arena.run(config))}
    assert table[SPEC].games == 1000
    assert table[SPEC].win_share >= 0.55
    assert table[SPEC].mean_round_score < table["random"].mean_round_score


def test_training_writes_weights_the_bot_plays(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A small training run writes weights with their feature names, the same weights for
    the same seed; the SDK bot loads the file ``BULLRING_POLICY`` names and plays arena games
    with it; weights of other features are refused rather than misread."""
    out, again = tmp_path / "policy.json", tmp_path / "again.json"
    for path in (out, again):
        assert linear_policy.main(["--out", str(path), "--iterations", "2", "--population",
                                   "4", "--games", "2"]) == 0
    saved = json.loads(out.read_text())
    assert json.loads(again.read_text())["weights"] == saved["weights"]
    assert saved["card_features"] == list(linear_policy.CARD_FEATURES)
    assert len(saved["weights"]) == len(linear_policy.CARD_FEATURES) + \
        len(linear_policy.ROW_FEATURES)
    monkeypatch.setenv("BULLRING_POLICY", str(out))
    assert list(linear_policy.LinearPolicy().weights) == saved["weights"]
    outcomes = arena.run(ArenaConfig("six_nimmt", (SPEC, "random", "greedy"), 6, seed=2))
    assert len(outcomes) == 6
    saved["row_features"] = ["row_bullheads"]
    out.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="other features"):
        linear_policy.load(out)


def test_the_bot_plays_what_the_env_policy_plays() -> None:
    """Through the SDK the bot answers every decision with the action the policy picks on
    the environment's own observation of that seat, row choices included."""
    bot = linear_policy.LinearPolicy()
    env = SingleAgentEnv("six_nimmt", ["random"], seat=1)
    rows = 0
    for seed in range(5):
        obs, _info = env.reset(seed=seed)
        done = False
        while not done:
            index = linear_policy.choose(bot.weights, obs["observation"], obs["action_mask"],
                                         env.encoder)
            observation = env.observation_of()
            rows += index >= ROW_BASE
            assert bot.decide(observation) == env.encoder.action(observation.decision, index)
            obs, _reward, done, _truncated, _info = env.step(index)
    assert rows > 0
