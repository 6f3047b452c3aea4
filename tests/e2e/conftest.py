"""Fixtures shared by the e2e tests' modules: ``ladder``, the practice and challenge rig
(``challenge_rig.py``)."""

from tests.e2e.challenge_rig import ladder

__all__ = ["ladder"]
