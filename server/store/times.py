"""Times as the store keeps them (naive datetimes in UTC) and as callers read them: ms since
the Unix epoch on the wire, ISO text in JSON."""

from __future__ import annotations

from datetime import UTC, datetime


def ms(moment: datetime | None) -> int:
    """A time (naive: UTC) in ms since the Unix epoch; 0 for None."""
    if moment is None:
        return 0
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() * 1000)


def iso(ms: int) -> str | None:
    """ms since the Unix epoch as ISO text in UTC (the same from the database or a server)."""
    return None if not ms else datetime.fromtimestamp(ms / 1000, UTC).isoformat()
