"""The referee service: transport, match runner, persistence and the command line."""

import importlib.util as _util

if _util.find_spec("bullring.referee") is None or _util.find_spec("bullring.contract") is None:
    raise SystemExit("bullring: the bot SDK this server runs on (the distribution bullring-sdk) "
                     "is not installed; install it with: pip install ./client_sdk/python")
