"""Benchmarks: each figure beside a baseline measured in the same run.

Run all with ``python -m benchmarks`` (one table), or one with
``python -m benchmarks exact`` / ``python -m benchmarks sim``.
"""
