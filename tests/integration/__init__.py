"""Integration tests: the server's parts in-process, on real sockets and real databases
(SQLite and PostgreSQL)."""
