"""The server serves every method the contract declares, each with the proto's shape."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, NamedTuple

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.app import SERVICES, RefereeServer, ServerOptions


class _Call(NamedTuple):
    """What grpc hands a generic handler to find a method's handler."""

    method: str
    invocation_metadata: tuple[Any, ...] = ()


def test_every_method_of_the_contract_is_served_with_its_shape(tmp_path: Path) -> None:
    """For each service of referee.proto, each method has a handler on the server, whose
    streaming on either side is the proto's; nothing is served that the proto lacks."""
    async def handlers() -> tuple[Any, ...]:
        server = RefereeServer(ServerOptions(port=0, http_port=None,
                                             db=f"sqlite:///{tmp_path / 'services.db'}"))
        found = server.handlers
        server.store.engine.dispose()
        return found

    served = asyncio.run(handlers())
    services = {s.full_name: s for s in pb.DESCRIPTOR.services_by_name.values()}
    assert sorted(SERVICES) == sorted(services)
    for service in services.values():
        for method in service.methods:
            path = f"/{service.full_name}/{method.name}"
            found = [h for g in served if (h := g.service(_Call(path))) is not None]
            assert len(found) == 1, path
            assert (found[0].request_streaming, found[0].response_streaming) == \
                (method.client_streaming, method.server_streaming), path
    assert all(g.service(_Call("/bullring.v2.BotService/Missing")) is None for g in served)
