"""The referee service: transport, match runner, persistence and the command line."""

import referee  # noqa: F401  first: it picks compiled modules or sources, ours too (_accel)
