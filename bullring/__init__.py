"""Bullring: a referee server for bot competitions at card games, with its bot SDK.

One namespace: ``bullring.referee`` (the rules), ``bullring.contract`` (the wire),
``bullring.commandline`` (what every command shares), ``bullring.sdk`` (the Python bot
author's API) and ``bullring.server`` (the referee service). docs/architecture.md maps them.
"""

# The server (``bullring.server``) is a distribution of its own: let this package span every
# folder named ``bullring`` on the path, so a server installed apart from the SDK (or a
# development tree beside an installed SDK) is found.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
