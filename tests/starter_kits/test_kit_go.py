"""The Go starter kit (client_sdk/go): copied out of the repository with the contract,
built by its README's command from Debian's Go packages, and run on a live server's
ladder and on match seats (tests/kits.py says what is checked)."""

from __future__ import annotations

from pathlib import Path

from tests.kits import Kit, VariantKitTests


class TestGoKit(VariantKitTests):
    """The Go kit; its throwing bot's PlayCard panics, and the stack names it."""

    KIT = Kit("go", ("go", "protoc", "make"),
              frozenset({"closest to a row's end", "lowest card", "shortest row", "out of chips",
                         "the pot pays for it", "too dear for the pot"}))
    BOT_SOURCE = "bot.go"
    THROWING_SOURCE = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.go"
    THROWN_AT = "(*throwingBot).PlayCard"
