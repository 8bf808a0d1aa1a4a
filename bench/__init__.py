"""Benchmarks: each figure is a ratio against a baseline measured in the same run.

Every figure module exposes ``run(smoke: bool = False) -> dict`` and is run by
``python -m bench.run_all`` (``make bench``), which writes BENCHMARKS.md. A smoke
run (tiny sizes, seconds) of each one is part of the test suite so they never rot.
"""
