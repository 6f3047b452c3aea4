"""Reinforcement-learning environments on the referee's engines (``pip install bullring[envs]``).

- ``SixNimmtParallelEnv``: 6 nimmt! as a PettingZoo ``ParallelEnv`` (simultaneous cards);
- ``NoThanksAECEnv``: No Thanks! as a PettingZoo ``AECEnv`` (turn-based);
- ``SingleAgentEnv``: either game as a Gymnasium ``Env`` for one seat against bots, known to
  ``gymnasium.make`` as ``bullring/SixNimmt-v1`` and ``bullring/NoThanks-v1``.

Their observations are built from the observation a remote bot receives (``encoding``), so
a policy trained here plays through the SDK unchanged. docs/envs.md describes them.
"""

from __future__ import annotations

import gymnasium

from bullring.sdk.envs.encoding import Encoder, encoder
from bullring.sdk.envs.no_thanks_env import NoThanksAECEnv
from bullring.sdk.envs.single import SingleAgentEnv
from bullring.sdk.envs.six_nimmt_env import SixNimmtParallelEnv

__all__ = ["GYMNASIUM_IDS", "Encoder", "NoThanksAECEnv", "SingleAgentEnv", "SixNimmtParallelEnv",
           "encoder"]

GYMNASIUM_IDS = {"bullring/SixNimmt-v1": {"game": "six_nimmt", "opponents": ("random",)},
                 "bullring/NoThanks-v1": {"game": "no_thanks",
                                          "opponents": ("random", "random")}}
"""The ids ``gymnasium.make`` knows ``SingleAgentEnv`` by, and their default arguments."""

for _id, _kwargs in GYMNASIUM_IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point="bullring.sdk.envs.single:SingleAgentEnv",
                           kwargs=_kwargs)
