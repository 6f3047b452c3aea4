"""The ``bullring`` command line: serve, the ladder's commands, tournaments, challenges."""
