"""How callers reach the server: gRPC, HTTP and the web page, within one set of limits."""
