"""The `rolebench` command line (`rolebench.cli.main:main`); subcommands live in `rolebench.commands`."""
