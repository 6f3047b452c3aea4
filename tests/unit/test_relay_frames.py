"""The frames servers of a fleet relay seats with (``bullring.server.fleet.frames``): what
one side writes, the other reads back whole, and anything else is refused."""

from __future__ import annotations

import pytest

from bullring.server.fleet import frames
from bullring.server.fleet.frames import Frame, Kind


def test_a_frame_reads_back_as_written() -> None:
    """Every kind of frame, with or without a bot and a number, reads back field for field,
    its body byte for byte (a body may hold newlines and spaces)."""
    body = b"\x00\n two lines\n"
    for kind in Kind:
        data = frames.encode(kind, "1f2e3d4c5b6a", 3, "a1b2c3d4e5f60718", body,
                             bot="lowcard.v2" if kind is Kind.PLAY else "",
                             number=7 if kind in (Kind.ANSWER, Kind.VERDICT) else 0)
        assert frames.decode(data) == Frame(
            kind, "1f2e3d4c5b6a", 3, "a1b2c3d4e5f60718",
            "lowcard.v2" if kind is Kind.PLAY else "",
            7 if kind in (Kind.ANSWER, Kind.VERDICT) else 0, body)
    assert frames.subject("a1b2c3d4e5f60718") == "bullring.relay.a1b2c3d4e5f60718"


def test_messages_packed_in_a_play_frame_unpack_in_order() -> None:
    """A PLAY frame's body holds its messages in order, empty ones included."""
    messages = [b"first", b"", b"\n" * 300, bytes(range(256))]
    assert frames.unpack(frames.pack(messages)) == messages
    assert frames.unpack(b"") == []


@pytest.mark.parametrize("data", [b"", b"no header line", b"P m 0 s - 0",
                                  b"X m 0 s - 0\n", b"P m seat s - 0\n", b"P m 0 s - 0 extra\n"])
def test_what_is_not_a_frame_is_refused(data: bytes) -> None:
    """No newline, an unknown kind, a seat or number that is not a number, a field too
    many: ValueError."""
    with pytest.raises(ValueError):
        frames.decode(data)


def test_a_body_cut_short_is_refused() -> None:
    """A PLAY body whose last message (or its length) is cut short: ValueError."""
    whole = frames.pack([b"abcdef"])
    for cut in (whole[:2], whole[:-1]):
        with pytest.raises(ValueError):
            frames.unpack(cut)
