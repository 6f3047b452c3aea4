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
