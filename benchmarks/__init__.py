"""Benchmark scripts (not tests, not shipped in the wheel); ``python -m benchmarks`` runs the suite."""
