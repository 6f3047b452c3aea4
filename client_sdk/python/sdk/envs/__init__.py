"""Reinforcement-learning environments on the referee's engines (``pip install bullring[envs]``).

- ``SixNimmtParallelEnv``: 6 nimmt! as a PettingZoo ``ParallelEnv`` (simultaneous cards);
- ``NoThanksAECEnv``: No Thanks! as a PettingZoo ``AECEnv`` (turn-based);
- ``SingleAgentEnv``: either game as a Gymnasium ``Env`` for one seat against bots.

Their observations are built from the observation a remote bot receives (``encoding``), so
a policy trained here plays through the SDK unchanged. docs/envs.md describes them.
"""

from __future__ import annotations

from bullring.sdk.envs.encoding import Encoder, encoder
from bullring.sdk.envs.no_thanks_env import NoThanksAECEnv
from bullring.sdk.envs.single import SingleAgentEnv
from bullring.sdk.envs.six_nimmt_env import SixNimmtParallelEnv

__all__ = ["Encoder", "NoThanksAECEnv", "SingleAgentEnv", "SixNimmtParallelEnv", "encoder"]
