"""The leaderboard as one self-contained HTML page (Jinja2, autoescaped; inline CSS and JS only).

The page makes no network request of any kind: no fonts, scripts, styles or images from elsewhere.
Columns sort on click, a select filters by split, and each row opens its per-role scores, which the
page's script builds from JSON embedded with Jinja's `tojson` (safe inside `<script>`) using
`textContent` only. Its Content-Security-Policy allows no source at all, only inline styles, data:
images and the page's own script (by its hash): a missed escape could neither load nor run anything.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import markupsafe

from rolebench.leaderboard.boards import REPORTED, SPLIT_LABELS, Board, Row, n_display
from rolebench.leaderboard.tables import (
    ABOUT,
    best_values,
    board_heading,
    is_best,
    length_text,
    metric_text,
    win_text,
    wtl_text,
)
from rolebench.scoring.metrics import AVG, METRIC_KEYS
from rolebench.templating import html_environment

TEMPLATE_DIR = Path(__file__).parent / "templates"
PAGE_TEMPLATE = "leaderboard.html.j2"
PAGE_SCRIPT = "leaderboard.js"


def _cell(text: str, sort: Any, *, bold: bool = False, numeric: bool = True) -> dict[str, Any]:
    return {"text": text, "sort": "" if sort is None else sort, "bold": bold, "numeric": numeric}


def _row_view(row: Row, best: dict[str, float], key: str) -> dict[str, Any]:
    def score(column: str, text: str) -> dict[str, Any]:
        return _cell(text, getattr(row, column), bold=is_best(row, column, best))

    return {
        "key": key,
        "split": row.split,
        "reference": row.source == REPORTED,
        "model": row.model,
        "title": " · ".join(x for x in (row.spec, row.run) if x),
        "rank": _cell(str(row.rank) if row.rank else "–", row.rank),
        "scores": [score(m, metric_text(getattr(row, m))) for m in (*METRIC_KEYS, AVG, f"f_{AVG}")]
        + [_cell(length_text(row), row.answer_words), score("win_rate", win_text(row))],
        "wtl": _cell(wtl_text(row), row.wins),
        "n": _cell(n_display(row), row.n),
        "date": _cell(row.date, row.date, numeric=False),
        "flags": [f for f in row.flags() if f != REPORTED],
        "partial": row.partial,
        "judge": row.judge,
        "has_roles": bool(row.per_role),
    }


def page_context(boards: Sequence[Board], title: str, generated: str) -> dict[str, Any]:
    """Everything the template shows; `roles` is the JSON the drill-down script reads."""
    views, roles = [], {}
    for board in boards:
        best = best_values(board)
        rows = []
        for index, row in enumerate(board.rows):
            key = f"{board.id}/{index}"
            rows.append(_row_view(row, best, key))
            if row.per_role:
                roles[key] = {"model": row.model, "split": SPLIT_LABELS[row.split], "roles": row.per_role}
        views.append(
            {
                "id": board.id,
                "split": board.split,
                "split_label": SPLIT_LABELS[board.split],
                "heading": board_heading(board),
                "reference": board.reference,
                "rows": rows,
            }
        )
    splits = [(s, label) for s, label in SPLIT_LABELS.items() if any(b.split == s for b in boards)]
    return {
        "title": title,
        "about": ABOUT,
        "generated": generated,
        "boards": views,
        "splits": splits,
        "roles": {"metrics": list(METRIC_KEYS), "rows": roles},
        **page_script(),
    }


@cache
def page_script() -> dict[str, Any]:
    """The page's script (a static file, trusted) and its CSP hash: the page runs no other script."""
    text = (TEMPLATE_DIR / PAGE_SCRIPT).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return {"script": markupsafe.Markup(text), "script_hash": f"sha256-{digest}"}


def to_html(boards: Sequence[Board], *, title: str = "RoleBench leaderboard", generated: str = "") -> str:
    return (
        html_environment(TEMPLATE_DIR)
        .get_template(PAGE_TEMPLATE)
        .render(**page_context(boards, title, generated))
    )
