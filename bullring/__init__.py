"""Bullring: a referee server for bot competitions at card games, with its bot SDK.

One namespace: ``bullring.referee`` (the rules), ``bullring.contract`` (the wire),
``bullring.commandline`` (what every command shares), ``bullring.sdk`` (the Python bot
author's API) and ``bullring.server`` (the referee service). docs/architecture.md maps them.
"""
