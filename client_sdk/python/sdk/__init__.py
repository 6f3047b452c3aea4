"""The Python SDK for bot authors: the Bot API, house bots and the local arena."""
