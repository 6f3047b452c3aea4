"""The referee service: transport, match runner, persistence and the command line."""
