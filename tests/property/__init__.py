"""Property tests (hypothesis): random games and seeds against the rules."""
