"""The prompts that change scores.

The RoleGPT role-play prompt, the judge's and the recipes' prompt texts (Jinja2 files in `templates/`).
"""
