"""How every Jinja2 template is loaded: one environment per template folder, strict about missing values.

Prompt templates (`rolebench/prompts/templates/`) change scores; presentation templates live beside
the module that fills them (leaderboard page, run report, dataset card). Text templates keep their
content as written (no autoescape); HTML templates escape every value.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2


@cache
def text_environment(folder: Path) -> jinja2.Environment:
    """Templates of plain text (prompts, Markdown): no escaping; a missing value is an error."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


@cache
def html_environment(folder: Path) -> jinja2.Environment:
    """Templates of HTML pages: every value escaped; a missing value is an error."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
