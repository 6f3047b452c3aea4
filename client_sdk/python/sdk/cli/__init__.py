"""The SDK's commands: ``bullring bot``, ``arena``, ``tournament`` and ``mcp``."""
