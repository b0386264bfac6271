"""`rolebench evaluate` and `rolebench score`: plan, generate, score, aggregate, write."""
