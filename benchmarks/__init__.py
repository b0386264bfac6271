"""Speed measurements, run from the repository root as `python -m benchmarks.<script>`."""
