"""The ladder: sessions of connected bots, seating, its rules and ratings."""
