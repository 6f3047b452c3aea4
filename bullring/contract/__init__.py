"""The contract: the code generated from ``proto/`` and the one codec per transport that
server and SDK share."""
