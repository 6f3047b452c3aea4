"""The command line's exit statuses, its errors, the parser and the one error boundary
at each entry point (see ``bullring.commandline``)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from bullring.errors import BullringError, ExitCode

EXIT_STATUSES = """exit status:
  0    done
  1    the check failed (replay verify: a mismatch; health: not SERVING)
  2    a bad option, argument or setting
  3    the server refused the token
  4    the server could not be reached
  5    the database could not be opened or reached
  6    a bot raised or answered illegally (its traceback follows the message)
  7    no such match or bot, or the name is taken
  8    the output was closed before it was all written
  130  interrupted
  A traceback with any other error is a bug in Bullring: please report it."""
"""The exit statuses, as every command's ``--help`` ends."""


class CommandError(BullringError):
    """A failure a command itself reports in one line, ``PROG: MESSAGE``, with its exit
    status (library code raises its own ``BullringError``s, which the boundary reports the
    same way)."""

    exit_code = ExitCode.FAILED

    def __init__(self, message: str, *, prog: str | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.prog = prog
        """The command that failed, when it is not the one the boundary runs."""
        self.detail = detail
        """More lines printed after the message (a bot's own traceback)."""


class UsageError(CommandError):
    """A bad option, argument or setting."""

    exit_code = ExitCode.USAGE


class RefusedError(CommandError):
    """The server refused the token."""

    exit_code = ExitCode.REFUSED


class UnreachableError(CommandError):
    """The server did not answer."""

    exit_code = ExitCode.UNREACHABLE


class DatabaseError(CommandError):
    """The database could not be opened or reached."""

    exit_code = ExitCode.DATABASE


class NotFoundError(CommandError):
    """No such match or bot, or a name already taken."""

    exit_code = ExitCode.NOT_FOUND


# --------------------------------------------------------------------------- the parser


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line naming the option (a ``UsageError``),
    whose help ends with the exit statuses, and whose ``--version`` names the package."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", EXIT_STATUSES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        """The help, with the docstrings' ``code`` marks taken out."""
        return super().format_help().replace("``", "")

    def error(self, message: str) -> NoReturn:
        """Raise a ``UsageError`` saying what was wrong (argparse prints usage and exits)."""
        message = message.removeprefix("argument ")
        raise UsageError(f"{message} (see {self.prog} --help)", prog=self.prog)


class _Version(argparse.Action):
    """``--version``: print the installed package's version (looked up only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def version() -> str:
    """The installed version of Bullring (the full install, else the bot SDK)."""
    from importlib import metadata

    for package in ("bullring", "bullring-sdk"):
        try:
            return f"{metadata.version(package)} ({package})"
        except metadata.PackageNotFoundError:
            continue
    return "(not installed)"


def new_parser(prog: str, description: str | None) -> Parser:
    """A top-level parser for ``prog`` with ``--version``."""
    parser = Parser(prog=prog, description=description)
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    return parser


# --------------------------------------------------------------------------- the boundary


if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[Any]
    """What ``add_subparsers`` returns: a command's sub-commands (annotations only)."""

Classifier = Callable[[BaseException], BullringError | None]
"""Turns an error of some other layer (the database's) into a ``BullringError``, or None."""


def run(prog: str, parser: argparse.ArgumentParser, argv: Sequence[str] | None,
        classify: Classifier | None = None) -> int:
    """Parse ``argv``, run the command it names (``args.run``) and return its exit status.

    The project's errors (``BullringError``) become one line on stderr, ``PROG: MESSAGE``,
    and the status of their class (``exit_code``); anything else propagates with its
    traceback.
    """
    args = argparse.Namespace()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        return int(args.run(args))
    except KeyboardInterrupt:
        print(f"{getattr(args, 'command_prog', prog)}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        print(f"{getattr(args, 'command_prog', prog)}: the output was closed before it was all "
              f"written", file=sys.stderr)
        return ExitCode.OUTPUT_CLOSED
    except Exception as exc:
        error = known_error(exc, classify)
        if error is None:
            raise
        named = getattr(error, "prog", None) or getattr(args, "command_prog", prog)
        print(f"{named}: {error}", file=sys.stderr)
        detail: str = getattr(error, "detail", "")
        if detail:
            print(detail.rstrip("\n"), file=sys.stderr)
        return error.exit_code


def known_error(exc: BaseException, classify: Classifier | None = None) -> BullringError | None:
    """``exc`` when it is one of the project's errors, else what ``classify`` makes of it
    (an error of another layer the command knows, such as the database's), else None."""
    if isinstance(exc, BullringError):
        return exc
    return None if classify is None else classify(exc)


T = TypeVar("T")


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop until it ends and return its result, as
    ``asyncio.run`` does; Ctrl-C (SIGINT) cancels it and, once it has wound down, raises
    ``KeyboardInterrupt`` (which ``run`` reports as ``interrupted``, status 130). A second
    Ctrl-C while it winds down raises ``KeyboardInterrupt`` at once.

    Ctrl-C is taken through the loop's own signal handling, which wakes a sleeping loop
    through its wake-up descriptor whichever thread the signal lands on. ``asyncio.run``'s
    handler is a plain Python one, run only when the main thread next runs Python code: a
    Ctrl-C taken by another thread (gRPC's, the bot's), or in the instant before the loop
    goes to sleep, waits for the loop's next event, which for a bot waiting on a ladder may
    never come. Off the main thread, or with SIGINT not at Python's default handler (ignored,
    or the caller's own), SIGINT is left alone."""
    import asyncio
    import signal
    import threading

    take_sigint = (threading.current_thread() is threading.main_thread()
                   and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    interrupted = False

    async def interruptible() -> T:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def on_sigint() -> None:
            nonlocal interrupted
            if interrupted:
                raise KeyboardInterrupt
            interrupted = True
            task.cancel()

        if take_sigint:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await main
        finally:
            if take_sigint:
                loop.remove_signal_handler(signal.SIGINT)

    with asyncio.Runner() as runner:
        try:
            return runner.run(interruptible())
        except asyncio.CancelledError:
            if interrupted:
                raise KeyboardInterrupt from None
            raise


def command(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int]) -> None:
    """Make ``parser`` run ``run`` and name itself (``bullring arena``) in its errors."""
    parser.set_defaults(run=run, command_prog=parser.prog)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def bot_traceback(exc: BaseException, skip: Callable[[str], bool]) -> str:
    """The traceback of a bot's exception, keeping only frames whose file ``skip`` does not
    reject (the author's code, not the arena's), so it points at the author's file and line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not skip(f.filename)]
    lines = ["Traceback (the bot's code):\n", *traceback.format_list(frames),
             *traceback.format_exception_only(type(exc), exc)]
    return "".join(lines)


