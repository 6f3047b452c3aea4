"""schemathesis hooks for tests/e2e/test_api_fuzz.py, loaded from this file by path
(``SCHEMATHESIS_HOOKS``).

``refused_only_as_declared``: a request its schema allows may be refused only for what its
operation's ``x-refusals-beyond-schema`` declares (a rule between fields that JSON Schema
cannot say in a form a generator can draw from): the status and the error code it names.
The test passes each operation's declarations, read from the server's /openapi.json, in
``BULLRING_BEYOND_SCHEMA``, and lets schemathesis's positive-data check accept those
statuses on those operations alone."""

from __future__ import annotations

import json
import os
from typing import Any

import schemathesis

DECLARED: dict[str, list[dict[str, Any]]] = json.loads(os.environ.get("BULLRING_BEYOND_SCHEMA",
                                                                      "{}"))
"""The declared refusals by ``METHOD /path``."""


POLL_WAIT_MS = 250
"""The longest wait a poll that continues a connection (``GET /api/play/poll`` with
``after``) is sent with."""


@schemathesis.hook
def before_call(ctx: Any, case: Any, kwargs: dict[str, Any]) -> None:
    """A poll with ``after`` waits at most ``POLL_WAIT_MS``: no message newer than a generated
    ``after`` ever comes, so it would wait its whole ``wait_ms`` (20 s if none is given, up
    to 25 s) to be answered with no messages; a shorter wait takes the same path. A
    ``wait_ms`` that is not a whole number, or outside 0 to 25,000, goes as generated (it is
    refused at once), and so do joining polls (no ``after``: answered at once)."""
    query = case.query
    if (case.method.upper(), case.path) != ("GET", "/api/play/poll") \
            or not isinstance(query, dict) or "after" not in query:
        return
    wait = query.get("wait_ms", 20_000)
    if isinstance(wait, int) and not isinstance(wait, bool) and POLL_WAIT_MS < wait <= 25_000:
        query["wait_ms"] = POLL_WAIT_MS


@schemathesis.check
def refused_only_as_declared(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request refused by an operation that declares refusals beyond its
    schema got one of them: its status and its error code."""
    declared = DECLARED.get(f"{case.method.upper()} {case.path}")
    meta = case.meta
    if not declared or meta is None or not meta.generation.mode.is_positive \
            or response.status_code < 400 or response.status_code >= 500:
        return None
    if not any(response.status_code == d["status"] for d in declared):
        return None  # a status schemathesis's own checks judge (401, 404, ...)
    code = json.loads(response.content)["error"]["code"]
    if not any((d["status"], d["code"]) == (response.status_code, code) for d in declared):
        raise AssertionError(f"a schema-valid request got {response.status_code} {code!r}; "
                             f"the operation declares beyond its schema only {declared}")
    return None
