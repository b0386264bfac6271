"""Leaderboard tables (Markdown, CSV, LaTeX, HTML) built from results.json files, and publishing them to
the Hub.
"""
