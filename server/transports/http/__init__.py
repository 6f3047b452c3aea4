"""The HTTP side of the server: a JSON API (browse, live feed, bot play, admin) and the web
page, served by uvicorn in the same event loop as the gRPC server."""
