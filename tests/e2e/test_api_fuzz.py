"""schemathesis against the OpenAPI document of a real server: no request, however odd,
gets a 5xx; every 4xx carries the JSON error body; responses match their schemas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from tests.serving import ServerProcess, db_url, finish

EXAMPLES = 25
"""Examples per operation and mode: a short run, for CI."""


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with one finished match, a created one and an admin token."""
    folder: Path = tmp_path_factory.mktemp("fuzz")
    server = ServerProcess(db_url(folder)).start()
    match = server.create_match("no_thanks", 3, "--setting", "rounds=1")
    results = finish([server.bot(t, "house:random") for t in match.tokens])
    assert [code for code, _ in results] == [0, 0, 0]
    server.create_match("six_nimmt", 2)
    yield server
    server.stop()


def check(case: Any, server: ServerProcess, admin: str) -> None:
    """Send one generated request; assert no 5xx, schema conformance and JSON 4xx bodies."""
    headers = {"Authorization": f"Bearer {admin}"} if case.path.startswith("/api/admin") \
        else None
    response = case.call(base_url=server.http, headers=headers, timeout=15)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text)
    if 400 <= response.status_code < 500:
        body = response.json()
        assert set(body) == {"error"}, body
        assert isinstance(body["error"]["code"], str) and body["error"]["code"]
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    # Left out: schema-valid requests may still be refused for what the schema cannot say
    # (an unknown game, a setting out of range), and a lenient parse may accept what the
    # schema does not list (a Unix time for a date-time); both are 4xx/2xx, never a 5xx.
    case.validate_response(response, excluded_checks=[positive_data_acceptance,
                                                      negative_data_rejection])


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_5xx_and_json_errors(fuzzed: ServerProcess, mode: GenerationMode) -> None:
    """Requests generated from the document (valid ones, then invalid ones; admin paths with
    the admin token) never get a 5xx, conform to the document, and every 4xx body is
    {"error": {"code", "message"}}."""
    schema = schemathesis.openapi.from_url(f"{fuzzed.http}/openapi.json")
    admin = fuzzed.admin_token()
    # An Err (a part of the document schemathesis cannot read) has no .ok() and fails here.
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 10
    for operation in operations:
        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            check(case, fuzzed, admin)

        try:
            run()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE  # nothing to break in a parameterless call
