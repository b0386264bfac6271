"""Subcommands of the `rolebench` CLI, one module each (see `rolebench/cli.py`)."""
