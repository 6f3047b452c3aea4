"""``bullring health``: ask a server's gRPC health service whether it is SERVING.

A probe for containers and scripts (the Dockerfile's HEALTHCHECK, docker/entrypoint.sh's
test): ``grpc.health.v1.Health/Check`` for one service name (``""``: the whole server).
Exit status 0 SERVING, 1 any other status (NOT_SERVING while shutting down), 4 no answer:
a refused connection (nothing listens there) or an HTTP port (Bullring's HTTP port names its
gRPC port) is said at once, in one line.
"""

from __future__ import annotations

import argparse

from bullring import commandline as cli


def check(server: str, service: str = "", timeout_s: float = 3.0) -> str:
    """The health status name of ``service`` on ``server``; raises ``grpc.RpcError`` when
    the server does not answer within ``timeout_s``."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(server) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=service),
                              timeout=timeout_s, wait_for_ready=True)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bullring health`` options to ``parser``."""
    parser.add_argument("--server", default="127.0.0.1:50051", metavar="HOST:PORT",
                        type=cli.ServerAddress(),
                        help="the server to ask (default: 127.0.0.1:50051)")
    parser.add_argument("--service", default="", type=ServiceName(),
                        help="a service name, such as bullring.v2.BotService (default: the "
                             "whole server)")
    parser.add_argument("--timeout", type=cli.Seconds(0, strict=True), default=3.0,
                        metavar="SECONDS", help="how long to wait for an answer (default: 3)")
    cli.command(parser, run_from_args)


class ServiceName(cli.ArgType):
    """A gRPC service's full name (``bullring.v2.BotService``), or empty: the server."""

    good = "bullring.v2.BotService"
    bad = ("not a service", "a/b")

    def __call__(self, text: str) -> str:
        if text and not all(part.isidentifier() for part in text.split(".")):
            self.fail(f"must be a service's full name (bullring.v2.BotService), not {text!r}")
        return text


def run_from_args(args: argparse.Namespace) -> int:
    """Print the status; 0 when SERVING, 1 for another status; ``UnreachableError`` (4) when
    nobody answered."""
    import grpc

    from bullring.commandline import reach

    finding = reach.probe(args.server, min(1.0, args.timeout))
    if finding is not None:
        raise cli.UnreachableError(finding.message)
    try:
        status = check(args.server, args.service, args.timeout)
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        name = code.name if code is not None else "error"
        raise cli.UnreachableError(f"{args.server}: no answer ({name})") from None
    print(f"{args.server} {args.service or '(server)'}: {status}")
    return 0 if status == "SERVING" else 1
