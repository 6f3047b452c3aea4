"""End-to-end tests: a real bullring serve process, real bot processes, gRPC and HTTP on
loopback."""
