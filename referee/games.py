"""The two games Bullring comes with, each one ``GameSpec`` made in its own folder
(``six_nimmt/spec.py``, ``no_thanks/spec.py``): the entry points of the ``bullring.games``
group in ``bullring-sdk``'s metadata (client_sdk/python/pyproject.toml) name these, exactly
as another distribution's entry points name its own games (``bullring.referee.registry``)."""

from __future__ import annotations

from bullring.referee.no_thanks import spec as no_thanks_spec
from bullring.referee.six_nimmt import spec as six_nimmt_spec

SIX_NIMMT = six_nimmt_spec.SPEC
"""6 nimmt!, whose states are ``GameState``s of its Observation, Event and View."""

NO_THANKS = no_thanks_spec.SPEC
"""No Thanks!, whose states are ``GameState``s of its Observation, Event and View."""
