"""Pure, deterministic rules engines for the games Bullring referees.

No I/O, no clock, no global randomness: every random draw comes from a seed passed in.
"""
