"""Benchmarks; each file runs as a script (``python bench/NAME.py``)."""
