"""Worker processes for the arena and the tournament: ranges of games over K processes,
results back in range order.

The parent's main thread does all the bookkeeping, with no helper threads: it keeps two
ranges in flight per worker (so a worker never waits for the parent between ranges), hands a
worker its next range as soon as a result comes back, and reads results with
``multiprocessing.connection.wait``. (``multiprocessing.Pool`` adds three threads to the
parent, one of which also wakes on the result pipe and spins while a result waits there to be
read, taking time on the cores the workers play on.) While forked workers run, the parent's
older objects are frozen out of the garbage collector's generations (``gc.freeze``), so that
collections on either side of the fork do not write to, and so copy, the pages both share.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, TypeVar

from bullring.sdk.errors import BotFailedError

T = TypeVar("T")
"""What one range of games gives back."""

IN_FLIGHT = 2
"""Ranges handed to each worker ahead of its results."""

_STOP = b"stop"
"""What the parent sends a worker when no ranges are left (a range is sent as a pickle)."""


class WorkerDiedError(BotFailedError):
    """A worker process ended without sending back the result of its range: a bot exited
    the process (``sys.exit``), crashed it, or something killed it."""


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker, as the cause of the one raised
    in the parent."""

    def __str__(self) -> str:
        return f"\n{self.args[0]}" if self.args else ""


def over_workers(context: Any, play_range: Callable[[Any], T], ranges: Sequence[Any],
                 workers: int) -> Generator[T, None, None]:
    """Yield ``play_range(r)`` for each ``r`` of ``ranges``, in order, played by ``workers``
    processes that the multiprocessing ``context`` starts. The first range (in order) that
    raises raises its exception here; the workers are stopped whatever happens, also when
    the caller closes the generator early."""
    forked = context.get_start_method() == "fork"
    freeze = forked and not gc.get_freeze_count()  # a caller's own freeze is left alone
    workers_by_conn: dict[Connection, Any] = {}
    if freeze:
        gc.freeze()
    try:
        for _ in range(workers):
            mine, theirs = context.Pipe()
            # a forked child closes the parent's ends it inherits, so it sees the parent go.
            inherited = (*workers_by_conn, mine) if forked else ()
            process = context.Process(target=_serve, args=(theirs, play_range, inherited),
                                      daemon=True)
            process.start()
            theirs.close()
            workers_by_conn[mine] = process
        yield from _deal(workers_by_conn, ranges)
        for conn in workers_by_conn:
            with contextlib.suppress(OSError):  # a worker already gone needs no stop
                conn.send_bytes(_STOP)
        for process in workers_by_conn.values():
            process.join()
    finally:
        for conn, process in workers_by_conn.items():
            conn.close()
            if process.exitcode is None:
                process.terminate()
                process.join()
        if freeze:
            gc.unfreeze()


def _deal(workers: dict[Connection, Any], ranges: Sequence[Any]) -> Iterator[Any]:
    """Hand ``ranges`` out to ``workers`` (process by connection); yield their results in
    range order."""
    queued: dict[Connection, deque[int]] = {conn: deque() for conn in workers}
    done: dict[int, tuple[bool, Any, str]] = {}
    given = 0

    def give(conn: Connection) -> None:
        nonlocal given
        if given < len(ranges):
            queued[conn].append(given)
            given += 1
            with contextlib.suppress(OSError):  # a worker gone is reported by its recv
                conn.send_bytes(ForkingPickler.dumps(ranges[given - 1]))

    for _ in range(IN_FLIGHT):
        for conn in workers:
            give(conn)
    yielded = 0
    while yielded < len(ranges):
        for ready in wait([conn for conn in workers if queued[conn]]):
            assert isinstance(ready, Connection)
            try:
                data = ready.recv_bytes()
            except (EOFError, OSError):
                process = workers[ready]
                process.join(1)
                raise WorkerDiedError(
                    f"a worker process ended (exit status {process.exitcode}) before sending "
                    f"back its games: a bot exited the process or crashed it, or the process "
                    f"was killed") from None
            give(ready)
            done[queued[ready].popleft()] = ForkingPickler.loads(data)
        while yielded in done:  # in range order: an error is the first failing range's
            ok, value, trace = done.pop(yielded)
            if not ok:
                raise value from RemoteTraceback(trace)
            yield value
            yielded += 1


def _serve(conn: Connection, play_range: Callable[[Any], Any],
           inherited: Sequence[Connection]) -> None:
    """A worker: play each range the parent sends until it says stop or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    for other in inherited:
        other.close()
    while True:
        try:
            task = conn.recv_bytes()
        except EOFError:
            return
        if task == _STOP:
            return
        try:
            reply: tuple[bool, Any, str] = (True, play_range(ForkingPickler.loads(task)), "")
        except Exception as exc:  # raised again in the parent
            reply = (False, exc, traceback.format_exc())
        try:
            data = ForkingPickler.dumps(reply)
        except Exception as exc:
            data = ForkingPickler.dumps((False, RuntimeError(
                f"a worker could not send back its games: {type(exc).__name__}: {exc}"),
                traceback.format_exc()))
        try:
            conn.send_bytes(data)
        except OSError:  # the parent is gone
            return
