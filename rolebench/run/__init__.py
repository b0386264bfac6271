"""A run: its one definition (`definition`), its record (`record`: run.json) and its folder (`folder`)."""
