"""Whether a seat's answer can stand: the checks an answer passes before the match runner
takes it, and how much of a refused answer the match log keeps."""

from __future__ import annotations

from bullring.contract import wire
from bullring.contract.comments import comment_problem
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.core import Action, ActionError
from bullring.referee.registry import AnyGameState
from bullring.server.errors import reject_reason

MAX_REJECTS_LOGGED = 20
"""Rejected answers of one seat logged per decision point; the rest are answered, unlogged."""

MAX_ID_LOGGED = 64
"""The longest decision id a rejection repeats in the log or its message (real ids are far
shorter; the verdict itself carries the id as given)."""


def not_pending(seat: int, decision_id: str) -> str:
    """Why an answer to a decision that is not pending for ``seat`` is refused."""
    return f"decision {decision_id[:MAX_ID_LOGGED]!r} is not pending for seat {seat}"


def refusal(state: AnyGameState, seat: int, action: Action | None, field: str | None,
            comment: str = "") -> tuple[pb.RejectReason, str] | None:
    """Why ``action`` (with ``comment``) cannot answer ``seat``'s pending decision in
    ``state``, or None if it can. ``field`` is the ``Action`` field the answer set (``card``,
    ``row``, ``word``): one that does not answer the pending decision's kind is malformed,
    whatever its value; so is a comment ``comment_problem`` finds fault with."""
    problem = comment_problem(comment)
    if problem is not None:
        return pb.REJECT_REASON_MALFORMED_ACTION, problem
    if action is None:
        return pb.REJECT_REASON_MALFORMED_ACTION, "the answer carries no action"
    kind = state.pending[seat].kind
    expected = wire.ACTION_FIELD[kind]
    if field != expected:
        return (pb.REJECT_REASON_MALFORMED_ACTION,
                f"a {wire.KIND_NAME[kind]} decision is answered with the action field "
                f"'{expected}', not '{field}'")
    try:
        state.validate(seat, action)
    except ActionError as refused:
        return reject_reason(refused), str(refused)
    return None
