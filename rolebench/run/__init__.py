"""A run: its one definition (`definition`, with its elicitation method: `elicitation`), its record
(`record`: run.json) and its folder (`folder`)."""
