"""What readers of ended matches are sent (their public feeds, their replays), encoded once
per match and shared by every reader.

An ended match never changes, so its encoded answer is built on its first read and kept in
a cache bounded in bytes (``bullring serve --replay-cache-mb``), the least recently read
answer out first. Readers that come while an answer is being built wait for that one build
instead of starting their own: forty readers of one match cost one build and one copy.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

log = logging.getLogger("bullring.archive")

T = TypeVar("T")

DEFAULT_CACHE_BYTES = 64 << 20
"""Memory for encoded answers about ended matches (64 MB)."""

ITEM_OVERHEAD = 64
"""Bytes counted for each piece of an answer beyond its length (the object, its pointer)."""


def size_of(value: object) -> int:
    """The bytes ``value`` (an encoded answer: bytes, text, a list or tuple of them, or a
    value that says its own ``size_bytes()``) holds, roughly."""
    sized = getattr(value, "size_bytes", None)
    if callable(sized):
        return int(sized()) + ITEM_OVERHEAD
    if isinstance(value, bytes | str):
        return len(value) + ITEM_OVERHEAD
    if isinstance(value, list | tuple):
        return sum(size_of(v) for v in value) + ITEM_OVERHEAD
    return ITEM_OVERHEAD


class Archive:
    """Encoded answers about ended matches, by key (what, match id), built once each."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        """The most bytes kept (an answer larger than this is built, shared by the readers
        waiting for it, and not kept)."""
        self.size = 0
        """The bytes kept now."""
        self.builds = 0
        """How many answers were built (each logged at DEBUG)."""
        self._kept: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._building: dict[Hashable, asyncio.Task[Any]] = {}

    def peek(self, key: Hashable) -> object | None:
        """The answer kept under ``key`` (now the most recently read), or None."""
        kept = self._kept.get(key)
        if kept is None:
            return None
        self._kept.move_to_end(key)
        found: object = kept[0]
        return found

    async def get(self, key: Hashable, build: Callable[[], Awaitable[T | None]]) -> T | None:
        """The answer kept under ``key``, or the one being built for it, or a new one from
        ``build`` (None is passed on and not kept: nothing to answer yet). ``build`` runs
        in a task of its own, so a reader that leaves does not cancel it for the others."""
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            found: T = kept[0]
            return found
        task = self._building.get(key)
        if task is None:
            task = asyncio.ensure_future(build())
            self._building[key] = task
            task.add_done_callback(lambda done: self._built(key, done))
        result: T | None = await asyncio.shield(task)
        return result

    def _built(self, key: Hashable, task: asyncio.Task[Any]) -> None:
        self._building.pop(key, None)
        if task.cancelled() or task.exception() is not None:
            return
        value = task.result()
        if value is None:
            return
        self.builds += 1
        size = size_of(value)
        log.debug("built %s: %d bytes", key, size)
        if size > self.max_bytes:
            return
        self._kept[key] = (value, size)
        self.size += size
        while self.size > self.max_bytes:
            _, (_, dropped) = self._kept.popitem(last=False)
            self.size -= dropped
