"""Install tests: packages built into fresh virtual environments (the image's files, the SDK)."""
