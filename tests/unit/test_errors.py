"""The one error table (server/errors.py): every refusal type answers with exactly one gRPC
status, one HTTP status and one code, and every transport reads it from there."""

from __future__ import annotations

import importlib
import pkgutil

import grpc
import pytest

import bullring
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.errors import BullringError
from bullring.referee.core import (
    ActionError,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
)
from bullring.server import errors
from bullring.server.errors import (
    ERRORS,
    REJECT_REASONS,
    DatabaseUnavailableError,
    Status,
    reject_reason,
    row_of,
    status_of,
)

HTTP_FOR_GRPC = {
    grpc.StatusCode.UNAUTHENTICATED: {401},
    grpc.StatusCode.PERMISSION_DENIED: {403},
    grpc.StatusCode.INVALID_ARGUMENT: {400, 422},
    grpc.StatusCode.NOT_FOUND: {404},
    grpc.StatusCode.ALREADY_EXISTS: {409},
    grpc.StatusCode.FAILED_PRECONDITION: {409},
    grpc.StatusCode.DEADLINE_EXCEEDED: {408},
    grpc.StatusCode.UNAVAILABLE: {503},
    grpc.StatusCode.RESOURCE_EXHAUSTED: {429},
}

BARE_BASES: frozenset[type[BaseException]] = frozenset(
    {BullringError, errors.ServiceError, errors.QuotaError})
"""Bases no code raises as they are: each subclass has a row, the base none of its own."""

SIGNALS = frozenset({"bullring.server.store.turns.TurnElsewhereError",
                     "bullring.server.transports.http.serving._BodyTooLarge",
                     "bullring.sdk.worker_pool.RemoteTraceback",
                     "bullring.sdk.seat.MovedOn"})
"""Exception classes that are no error of Bullring's: signals caught beside where they are
raised (another server's turn, a body over its limit, a decision the server moved past while
the bot decided it), and a worker's traceback text carried
as the cause of the error it explains."""


def _every_exception_class() -> set[type[BaseException]]:
    """Every exception class defined at the top of a module of the ``bullring`` package (all
    imported; the generated code and the database migrations hold none)."""
    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(bullring.__path__, "bullring."):
        if any(part in info.name for part in (".generated", ".migrations", "__main__")):
            continue
        module = importlib.import_module(info.name)
        found.update(value for value in vars(module).values()
                     if isinstance(value, type) and issubclass(value, BaseException)
                     and value.__module__ == info.name)
    return found
"""Which HTTP statuses agree with each gRPC status."""


@pytest.mark.parametrize("error", list(ERRORS), ids=lambda e: e.__name__)
def test_each_error_type_has_one_grpc_status_http_status_and_code(
        error: type[Exception]) -> None:
    """A row of the table is one gRPC status, an HTTP status that says the same, a
    snake_case code and a description; an instance of the type is answered with that row
    (when it is sent at all)."""
    row = ERRORS[error]
    assert isinstance(row.grpc, grpc.StatusCode) and row.grpc != grpc.StatusCode.OK
    assert row.http in HTTP_FOR_GRPC[row.grpc], (error, row)
    assert row.code and row.code == row.code.lower() and " " not in row.code
    assert row.when
    assert row_of(error) is row
    assert status_of(error.__new__(error)) is (row if row.wire else None)


def test_one_code_means_one_status_on_both_transports() -> None:
    """Two types that share a code share its statuses too, so a code tells a client what
    happened whatever the transport."""
    by_code: dict[str, set[tuple[grpc.StatusCode, int]]] = {}
    for row in ERRORS.values():
        by_code.setdefault(row.code, set()).add((row.grpc, row.http))
    assert {code: pairs for code, pairs in by_code.items() if len(pairs) > 1} == {}


def test_a_subclass_answers_as_its_nearest_listed_base() -> None:
    """A refusal type without a row of its own answers as its nearest listed base; a type
    the table does not name is no refusal (None: the transport answers an internal error)."""
    assert status_of(errors.NotAdminError()) is ERRORS[errors.ForbiddenError]
    assert status_of(errors.UnknownBotNameError("x")) is ERRORS[errors.UnknownBotNameError]
    assert status_of(errors.BotNameTakenError("x")) is not ERRORS[errors.BotError]

    class Unlisted(errors.InvalidChallengeError):
        pass

    assert status_of(Unlisted("x")) is ERRORS[errors.InvalidChallengeError]
    assert status_of(KeyError("x")) is None


def test_every_refusal_defined_beside_the_table_has_a_row() -> None:
    """No exception class of server/errors.py (but their bare bases) is left out of the
    table."""
    bases = (errors.ServiceError, errors.QuotaError)
    defined = [value for value in vars(errors).values()
               if isinstance(value, type) and issubclass(value, Exception)
               and value.__module__ == errors.__name__ and value not in bases]
    assert defined and [cls for cls in defined if row_of(cls) is None] == []


def test_malformed_illegal_and_not_pending_are_siblings_with_their_own_reason() -> None:
    """The referee's three refusals of an answer share one base and no other: an except
    clause for one never catches another, and each has its own in-band reason."""
    kinds = (MalformedActionError, IllegalActionError, NotPendingError)
    for kind in kinds:
        assert kind.__bases__ == (ActionError,)
        assert [other for other in kinds if other is not kind and issubclass(kind, other)] == []
    assert set(REJECT_REASONS) == set(kinds)
    assert len(set(REJECT_REASONS.values())) == len(kinds)
    assert reject_reason(MalformedActionError(0, "x", "bad")) == pb.REJECT_REASON_MALFORMED_ACTION
    assert reject_reason(IllegalActionError(0, 5, "no")) == pb.REJECT_REASON_ILLEGAL_ACTION
    assert reject_reason(NotPendingError(1, 5, "idle")) == pb.REJECT_REASON_NOT_PENDING


def test_a_status_hides_what_the_server_keeps_to_itself() -> None:
    """The database's own error text is never sent: its row carries the public message."""
    row: Status | None = status_of(DatabaseUnavailableError("password=secret"))
    assert row is not None and row.message is not None
    assert errors.message_of(DatabaseUnavailableError("password=secret"), row) \
        == errors.UNAVAILABLE_MESSAGE


def test_every_error_of_the_package_derives_from_the_base_and_has_its_row() -> None:
    """Every exception class of every module (the rules', the contract's, the commands',
    the SDK's and the server's) is a ``BullringError`` with a row in the one table (its own
    or its nearest listed base's), and a command's exit status on the class."""
    classes = {cls for cls in _every_exception_class()
               if f"{cls.__module__}.{cls.__qualname__}" not in SIGNALS}
    assert len(classes) > 50
    assert [cls for cls in classes if not issubclass(cls, BullringError)] == []
    assert [cls for cls in classes - BARE_BASES if row_of(cls) is None] == []
    assert [base for base in BARE_BASES if base in ERRORS] == []


def test_an_error_raised_on_the_callers_side_is_never_sent() -> None:
    """A row for an error of the rules, the SDK or a command is not answered by a transport
    (``status_of`` None: an internal error if it ever escaped there), and a built-in's
    callers still catch the project's errors of that kind."""
    from bullring.commandline import UsageError
    from bullring.referee.core import SettingsError
    from bullring.sdk.errors import UnknownBotError

    for error in (UsageError("x"), SettingsError("x"), UnknownBotError("x")):
        row = row_of(type(error))
        assert row is not None and not row.wire and status_of(error) is None
    assert isinstance(UnknownBotError("x"), ValueError)
    assert isinstance(errors.UnknownMatchError("x"), LookupError)
    assert status_of(errors.UnknownMatchError("x")) is ERRORS[errors.UnknownMatchError]


BUILT_IN_RAISES_ALLOWED = {
    "bullring/commandline/reach.py": "argparse's type= callables report a ValueError",
    "bullring/contract/protogen.py": "the build step, before the package exists",
}
"""Library modules that may raise a built-in exception, and why."""


def test_library_code_raises_the_projects_errors_not_bare_built_ins() -> None:
    """Rules, contract, SDK and server raise ``BullringError`` subclasses (which subclass a
    built-in where the failure is one), never a bare ValueError, RuntimeError, TypeError or
    LookupError, so one ``except BullringError`` and one error table cover them all. The
    SDK's examples are a bot author's code and may raise what they like."""
    import ast
    from pathlib import Path

    root = Path(bullring.__file__).resolve().parent.parent
    folders = ["bullring", "referee", "server", "client_sdk/python/sdk"]
    built_ins = {"ValueError", "RuntimeError", "TypeError", "LookupError", "KeyError"}
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if "generated" in relative or "/examples/" in relative or \
                    relative in BUILT_IN_RAISES_ALLOWED:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                        isinstance(node.exc.func, ast.Name) and node.exc.func.id in built_ins:
                    found.append(f"{relative}:{node.lineno} {node.exc.func.id}")
    assert found == []
