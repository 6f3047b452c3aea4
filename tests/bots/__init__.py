"""Tiny bots that tests load by spec."""
