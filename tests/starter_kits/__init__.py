"""Starter kits: each language's kit built from a clean tree and played on a live ladder."""
