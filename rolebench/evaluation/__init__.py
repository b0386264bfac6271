"""Evaluating a model on a benchmark, and the public API over it (`rolebench.evaluation.api`): plan,
generate, score, repair, derive results.json."""
