"""An LLM agent's seat over the Model Context Protocol (``bullring mcp``)."""
