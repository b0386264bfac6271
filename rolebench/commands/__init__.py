"""Subcommands of the `rolebench` CLI, one module each; modules starting with `_` are their shared helpers."""
