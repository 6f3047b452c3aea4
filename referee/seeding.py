"""Seeded draws, the only randomness of the rules: seeds derived from the match seed and a
path, the deal's sample, and the picks among a decision's legal actions.

Each function gives the same result on every platform and nothing but its seed and path
enters it (docs/rules.md §3). This module is one the compiler builds (``[tool.bullring]
compiled`` in pyproject.toml), and the only one of the rules that knows it: where the
interpreter's fastest way and the compiled module's differ, ``_COMPILED`` takes the right
one, and a test checks that both ways draw alike (tests/property/test_seeding.py).
"""

from __future__ import annotations

import hashlib
import struct
import types
from collections.abc import Sequence
from typing import Final, TypeVar

from bullring.errors import OutOfRangeError
from bullring.referee.core import Action, Decision

T = TypeVar("T")


def _path(seed: int, parts: tuple[object, ...]) -> bytes:
    return ":".join([str(seed), *[str(p) for p in parts]]).encode()


def derive_seed(seed: int, *parts: object) -> int:
    """Derive an independent 64-bit seed from a root seed and a path such as ("deal", 2)."""
    return int.from_bytes(hashlib.blake2b(_path(seed, parts), digest_size=8).digest(), "big")


def derive_seeds(seed: int, count: int, *parts: object) -> list[int]:
    """Derive ``count`` independent 64-bit seeds from a root seed and a path, all from one
    hash (SHAKE-256 over the path, 8 bytes a seed, little-endian): one per seat of a game."""
    stream = hashlib.shake_256(_path(seed, parts)).digest(8 * count)
    return list(struct.unpack(f"<{count}Q", stream))


def seeded_sample(population: Sequence[T], k: int, seed: int, *parts: object) -> list[T]:
    """Return ``k`` distinct items of ``population``, in an order fixed by the seed and path.

    The same ``(seed, *parts)`` always gives the same list, on every platform, and nothing
    else enters it: a round's deal drawn with the path ``("deal", round)`` depends on the
    match seed and the round number alone (docs/rules.md §3). It is a partial Fisher-Yates
    shuffle whose draws each take 64 bits of SHAKE-256 over the path (read little-endian)
    and map them onto ``0..m-1`` by multiply-and-shift, so every pick is uniform to within
    ``m / 2**64`` (2**-57 for a 104-card deck).
    """
    deck = list(population)
    size = len(deck)
    if not 0 <= k <= size:
        raise OutOfRangeError(f"cannot draw {k!r} items from a population of {size}")
    stream = hashlib.shake_256(_path(seed, parts)).digest(8 * k)
    if _COMPILED:
        return pick_by_bytes(deck, stream)
    return pick_by_words(deck, stream)


def pick_by_words(deck: list[T], stream: bytes) -> list[T]:
    """``seeded_sample``'s shuffle of ``deck`` (a fresh list, consumed) by the 64-bit draws
    of ``stream``: each draw a whole word, ``bits * m >> 64`` one bignum product (the
    interpreter's fastest way)."""
    picked = []
    left = len(deck)
    for bits in struct.unpack(f"<{len(stream) // 8}Q", stream):
        j: int = bits * left >> 64
        picked.append(deck[j])
        left -= 1
        deck[j] = deck[left]
    return picked


def pick_by_bytes(deck: list[T], stream: bytes) -> list[T]:
    """The same picks as ``pick_by_words``, a draw's ``bits * m >> 64`` taken one byte at a
    time, lowest first (``t = (byte * m + t) >> 8``, exact): machine integers throughout,
    the compiled module's fastest way, where the 128-bit product would be a bignum."""
    picked = []
    left = len(deck)
    for i in range(0, len(stream), 8):
        t = stream[i] * left >> 8
        t = (stream[i + 1] * left + t) >> 8
        t = (stream[i + 2] * left + t) >> 8
        t = (stream[i + 3] * left + t) >> 8
        t = (stream[i + 4] * left + t) >> 8
        t = (stream[i + 5] * left + t) >> 8
        t = (stream[i + 6] * left + t) >> 8
        j = (stream[i + 7] * left + t) >> 8
        picked.append(deck[j])
        left -= 1
        deck[j] = deck[left]
    return picked


_COMPILED: Final = not isinstance(pick_by_bytes, types.FunctionType)
"""True in the mypyc-compiled module (its functions are built-in ones): each draw then takes
the way that is fastest compiled (``pick_by_bytes``, and ``SeededPicks.pick``'s byte path),
else the interpreter's fastest (``pick_by_words``). Both give the same picks."""


_PICK_BLOCK: Final = 256
"""Bytes in a block of ``SeededPicks``' stream: 64 draws of 32 bits."""

_PICK_WORDS: Final = struct.Struct(f"<{_PICK_BLOCK // 4}I")


class SeededPicks:
    """Uniform picks among a decision's legal actions, from a seed and path's own stream.

    Block ``b`` of the stream is 256 bytes of SHAKE-256 over the path ``(*parts, "picks",
    b)``, read as little-endian 32-bit words; a word ``w`` picks ``legal[w * len(legal) >>
    32]``, uniform to within ``len(legal) / 2**32``. The same seed and path give the same
    picks on every platform. Starting one costs a fifth of seeding a ``random.Random`` (the
    house ``random`` bot is four of these in every arena game); the compiled module takes
    a word's product a byte at a time, as ``pick_by_bytes`` does, and a pick is a native call.
    """

    def __init__(self, seed: int, *parts: object) -> None:
        self._seed = seed
        self._parts = parts
        self._stream = b""
        self._words: tuple[int, ...] = ()
        self._next = 0
        self._blocks = 0

    def pick(self, decision: Decision) -> Action:
        """The next pick of the stream among ``decision.legal``."""
        legal = decision[2]  # .legal: an index is a native read, the name a type lookup
        m = len(legal)
        i = self._next
        if _COMPILED:
            stream = self._stream
            if i == len(stream):
                stream = self._stream = self._block()
                i = 0
            self._next = i + 4
            t = stream[i] * m >> 8
            t = (stream[i + 1] * m + t) >> 8
            t = (stream[i + 2] * m + t) >> 8
            return legal[(stream[i + 3] * m + t) >> 8]
        words = self._words
        if i == len(words):
            words = self._words = _PICK_WORDS.unpack(self._block())
            i = 0
        self._next = i + 1
        return legal[words[i] * m >> 32]

    def _block(self) -> bytes:
        path = _path(self._seed, (*self._parts, "picks", self._blocks))
        self._blocks += 1
        return hashlib.shake_256(path).digest(_PICK_BLOCK)
