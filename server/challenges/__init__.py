"""Practice matches and challenges between registered bots."""
