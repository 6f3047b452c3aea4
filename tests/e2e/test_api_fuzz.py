"""schemathesis against the OpenAPI document of a real server, with every check it has
(``--checks all``): no request, however odd, gets a 5xx; every response conforms to the
document (status, media type, headers, body, every 4xx the JSON error body); what the document
allows is accepted and what it forbids is refused; an OPTIONS or another undocumented method
gets 405 with an ``Allow`` header listing exactly the documented methods. It runs once with
the admin token and once with a registered bot's token, so the admin routes and the bot routes
(play, challenges) are each reached past their token check.

A request the document allows may be refused only as its operation declares in
``x-refusals-beyond-schema`` (a rule between fields JSON Schema cannot say in a form a
generator draws from: a seat named a house bot's and a person's, a tournament's schedule over
the server's limit): schemathesis accepts that status on that operation alone, and a check of
our own (``fuzz_hooks.py``) that the refusal carries the declared code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serving import ServerProcess, db_url, finish

EXAMPLES = 8
"""Examples per operation and generation mode: a short run, for CI."""

SEED = 20240501
"""The generation's seed: a failure in CI is the same failure on a laptop."""

HOOKS = Path(__file__).resolve().parent / "fuzz_hooks.py"
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]
"""What schemathesis's positive-data check accepts by default (a 5xx fails another check)."""

STREAM_EVENTS = 5
"""How many events of a bot's event stream (``GET /api/play/stream``) schemathesis reads and
checks before it hangs up. The stream never ends by itself; a ladder bot's first five are
its place (``ladder_queued``), ``match_started`` and the first decisions and public events,
every kind the unanswered seat gets (schemathesis's default, 20, is the same kinds over
several decision deadlines)."""

STREAM_TIMEOUT_S = 10
"""How long schemathesis reads a bot's event stream at most: one that stays silent after its
first event (a ladder that cannot fill a table) is read this long, not the whole request
timeout."""


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server running a 6 nimmt! ladder (for the bot routes), with one finished match and
    one created match."""
    folder: Path = tmp_path_factory.mktemp("fuzz")
    server = ServerProcess(db_url(folder), ["--ladder", "six_nimmt"]).start()
    match = server.create_match("no_thanks", 3, "--setting", "rounds=1")
    results = finish([server.bot(t, "house:random") for t in match.tokens])
    assert [code for code, _ in results] == [0, 0, 0]
    server.create_match("six_nimmt", 2)
    yield server
    server.stop()


def new_bot(server: ServerProcess, admin: str, name: str) -> str:
    """Register the bot ``name`` over HTTP; its token."""
    request = urllib.request.Request(
        f"{server.http}/api/admin/bots", data=json.dumps({"name": name}).encode(),
        headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        token: str = json.load(response)["token"]
    return token


def declared_beyond_schema(server: ServerProcess) -> dict[str, list[dict[str, object]]]:
    """Each operation's ``x-refusals-beyond-schema`` in the server's document, by ``METHOD
    /path``."""
    with urllib.request.urlopen(f"{server.http}/openapi.json", timeout=30) as response:
        document = json.load(response)
    return {f"{method.upper()} {path}": operation["x-refusals-beyond-schema"]
            for path, item in document["paths"].items()
            for method, operation in item.items()
            if isinstance(operation, dict) and "x-refusals-beyond-schema" in operation}


def config_file(declared: dict[str, list[dict[str, object]]], folder: Path) -> Path:
    """A schemathesis.toml that accepts each declared status as an answer to a schema-valid
    request on its operation alone, and reads a bot's event stream for ``STREAM_EVENTS``
    events or ``STREAM_TIMEOUT_S``. An operation is named by ``include-name`` (``METHOD
    /path``): ``include-path`` and ``include-method`` would each select on their own."""
    lines = []
    for operation, refusals in sorted(declared.items()):
        statuses = sorted({*POSITIVE_STATUSES, *(str(r["status"]) for r in refusals)})
        lines += ["[[operations]]", f"include-name = {json.dumps(operation)}",
                  f"checks.positive_data_acceptance.expected-statuses = {json.dumps(statuses)}",
                  ""]
    lines += ["[[operations]]", 'include-name = "GET /api/play/stream"',
              f"max-stream-events = {STREAM_EVENTS}", f"request-timeout = {STREAM_TIMEOUT_S}",
              ""]
    written = folder / "schemathesis.toml"
    written.write_text("\n".join(lines), encoding="utf-8")
    return written


def schemathesis(server: ServerProcess, token: str, reports: Path) -> tuple[int, str]:
    """``schemathesis run --checks all`` against ``server`` with ``token``, the document's
    refusals beyond its schema declared to it (``config_file``, ``fuzz_hooks.py``): its exit
    status and what it printed."""
    declared = declared_beyond_schema(server)
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file",
               str(config_file(declared, reports)), "run", f"{server.http}/openapi.json",
               "--checks", "all", "-H", f"Authorization: Bearer {token}",
               "--max-examples", str(EXAMPLES), "--seed", str(SEED), "--workers", "1",
               "--request-timeout", "30", "--max-response-time", "30",
               "--generation-database", "none", "--no-color", "--continue-on-failure",
               "--warnings", "off"]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS),
           "BULLRING_BEYOND_SCHEMA": json.dumps(declared)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=reports,
                          env=env)
    output = done.stdout + done.stderr
    (reports / "schemathesis.txt").write_text(output, encoding="utf-8")
    return done.returncode, output


@pytest.mark.parametrize("who", ["bot", "admin"])
def test_checks_all(fuzzed: ServerProcess, who: str, tmp_path: Path) -> None:
    """Every check schemathesis has passes on every operation, with the admin token and
    with a registered bot's token (a fresh bot each, so one run's token rotation or disable
    never leaves the other without a token): it finds nothing. The document declares
    refusals beyond the schema on three operations only (making a match, making a
    tournament, a long-poll ahead of its connection)."""
    admin = fuzzed.admin_token()
    token = admin if who == "admin" else new_bot(fuzzed, admin, f"fuzz-{tmp_path.name[-20:]}")
    assert set(declared_beyond_schema(fuzzed)) == {"POST /api/admin/matches",
                                                   "POST /api/admin/tournaments",
                                                   "GET /api/play/poll"}
    status, output = schemathesis(fuzzed, token, tmp_path)
    failures = output[output.find("FAILURES"):] if "FAILURES" in output else output[-6000:]
    assert status == 0, failures
    tested = re.search(r"Tested: (\d+)", output)
    assert tested is not None and int(tested.group(1)) >= 30, output[-3000:]
