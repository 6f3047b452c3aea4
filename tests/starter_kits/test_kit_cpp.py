"""The C++ starter kit (client_sdk/cpp): copied out of the repository with the contract,
built by its README's command from Debian's gRPC C++ packages, and run on a live server's
ladder and on match seats (tests/kits.py says what is checked)."""

from __future__ import annotations

from pathlib import Path

from tests.kits import Kit, VariantKitTests


class TestCppKit(VariantKitTests):
    """The C++ kit; its throwing bot's PlayCard throws, and the log says where."""

    KIT = Kit("cpp", ("g++", "protoc", "grpc_cpp_plugin", "pkg-config", "make"),
              frozenset({"closest to a row's end", "lowest card", "shortest row", "out of chips",
                         "the pot pays for it", "too dear for the pot"}))
    BOT_SOURCE = "bot.cpp"
    THROWING_SOURCE = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.cpp"
    THROWN_AT = "ThrowingBot::PlayCard"
