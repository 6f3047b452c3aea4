"""The NATS server on 127.0.0.1:4222 that links the servers of fleet tests (``bullring serve
--broker``), as PostgreSQL on 127.0.0.1:5432 holds their database (``tests/databases.py``)."""

from __future__ import annotations

import os
import socket

import pytest

BROKER = "nats://127.0.0.1:4222"
"""The broker's URL."""


def require_broker() -> str:
    """The broker's URL; the test is skipped when nothing listens there (failed under
    ``CI=true``, whose run starts the broker)."""
    try:
        socket.create_connection(("127.0.0.1", 4222), timeout=3).close()
    except OSError as exc:
        message = f"the NATS broker at 127.0.0.1:4222 is unreachable: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: the broker is required)")
        pytest.skip(message)
    return BROKER
