"""The test suite, a package so that benchmarks can reuse its fake servers (`tests.fake_openai`)."""
