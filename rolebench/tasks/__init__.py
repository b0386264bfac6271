"""Task and group definitions, read from the lm-eval-schema YAML files in `tasks/`."""
