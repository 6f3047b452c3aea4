"""Pure, deterministic rules engines for the games Bullring referees.

No I/O, no clock, no global randomness: every random draw comes from a seed passed in.
``ACCELERATED`` says whether the mypyc-compiled modules are in use (``referee/_accel.py``).
"""

from referee import _accel

ACCELERATED: bool = _accel.choose()
"""True when ``core`` and ``six_nimmt`` are the mypyc-compiled modules, not the sources."""
