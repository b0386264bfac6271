"""Presenting one run: the summary printed after a command and the HTML report page."""
