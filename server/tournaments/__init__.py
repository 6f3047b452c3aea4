"""Live tournaments among registered bots, played on the server beside the ladder."""
