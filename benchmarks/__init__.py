"""Scripts that print the figures in README.md; run each as ``python benchmarks/NAME.py``."""
