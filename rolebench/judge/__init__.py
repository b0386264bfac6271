"""The LLM judge's win rate against the RoleGPT baseline.

judge files, prompts, parsing, calls, outcomes, judgment store.
"""
