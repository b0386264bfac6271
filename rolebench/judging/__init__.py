"""The LLM judge's win rate against the RoleGPT baseline.

Judge files, prompts, parsing, calls, outcomes, judgment store.
"""
