"""Unit tests: one piece in-process (engines, SDK, command line, wire), no server process."""
