"""The server's log filter (``bullring.server.app.ClientNoise``) against what asyncio really logs
when
the process runs out of file descriptors and its listener is then closed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent('''
    import asyncio, asyncio.constants, logging, os, socket, sys
    from bullring.server.app import ClientNoise

    asyncio.constants.ACCEPT_RETRY_DELAY = 0.05   # asyncio reads it at each refusal
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(name)s %(levelname)s %(message)s")
    logging.getLogger("asyncio").addFilter(ClientNoise())

    async def main() -> None:
        loop = asyncio.get_running_loop()
        refused, failed_retry = asyncio.Event(), asyncio.Event()

        def seen(loop: asyncio.AbstractEventLoop, context: dict) -> None:
            if "out of system resource" in context["message"]:
                refused.set()
            if "_start_serving" in context["message"]:
                failed_retry.set()
            loop.default_exception_handler(context)   # what a server's loop does

        loop.set_exception_handler(seen)
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0, backlog=16)
        port = server.sockets[0].getsockname()[1]
        held = []
        try:
            while True:   # fill the descriptor table
                held.append(open(os.devnull))
        except OSError:
            pass
        held.pop().close()   # one descriptor for a client, none left for the accept
        held.append(socket.create_connection(("127.0.0.1", port)))
        await refused.wait()
        server.close()    # the listener goes while asyncio's retries are pending
        await failed_retry.wait()
        print("retries failed after the listener closed", flush=True)

    asyncio.run(main())
''')


def test_retries_of_refused_accepts_after_the_listener_closed_log_no_traceback() -> None:
    """Refused accepts are one WARNING line; asyncio's retries that fail once the listener
    is closed (one per connection of the backlog) log nothing at INFO, not a traceback each."""
    run = subprocess.run(["prlimit", "--nofile=64", "--", sys.executable, "-c", CHILD],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert "retries failed after the listener closed" in out, out[-3000:]
    assert out.count("asyncio WARNING socket.accept() out of system resource") == 1, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert "ERROR" not in out, out[-3000:]
