"""What the benchmark scripts share: a server process they start, and /proc figures."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER_LOG = Path(tempfile.gettempdir()) / "bullring-bench-server.log"
"""Where the servers a benchmark starts write their log (appended)."""


def start(cmd: list[str], log: Path = SERVER_LOG) -> tuple[subprocess.Popen[str], str]:
    """Start a server that prints ``listening on HOST:PORT`` first; return it and the address.

    Its log (stderr) is appended to ``log``.
    """
    with log.open("a") as stream:  # the child holds its own copy
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stream, text=True,
                                cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.kill()
        raise RuntimeError(f"{cmd!r} did not start: {line!r}; see {log}")
    return proc, line.split("listening on ")[1].split()[0]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` now (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of already sorted values (nearest rank)."""
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]
