"""The leaderboard as one self-contained HTML page (Jinja2, autoescaped; inline CSS and JS only).

Each board has a picture (`rolebench.leaderboard.figure`), drawn as inline SVG by the template.
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

from rolebench.leaderboard.boards import FLOOR, REPORTED, SPLIT_LABELS, Board, Row, n_display
from rolebench.leaderboard.columns import ABOUT_LEAD, ABOUT_MORE, FLAG_LEGEND, SHOWN_SCORES
from rolebench.leaderboard.figure import WIDTH, NameKey, board_figure
from rolebench.leaderboard.session_tables import ABOUT as SESSIONS_ABOUT
from rolebench.leaderboard.session_tables import page_boards
from rolebench.leaderboard.sessions import SessionBoard
from rolebench.leaderboard.tables import (
    best_values,
    board_heading,
    interval_text,
    is_best,
    metric_text,
    rank_text,
    share_text,
    wtl_text,
)
from rolebench.scoring.flags import MEANINGS
from rolebench.scoring.metrics import METRIC_KEYS, METRICS, named
from rolebench.templating import html_environment

TEMPLATE_DIR = Path(__file__).parent / "templates"
PAGE_TEMPLATE = "leaderboard.html.j2"
PAGE_SCRIPT = "leaderboard.js"


def _cell(text: str, sort: Any, *, bold: bool = False, numeric: bool = True, sub: str = "") -> dict[str, Any]:
    """A table cell: its text, a smaller second line (`sub`), and the value its column sorts by."""
    return {"text": text, "sub": sub, "sort": "" if sort is None else sort, "bold": bold, "numeric": numeric}


def _interval(interval: list[float] | None) -> str:
    return f"[{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else ""


def _length_cell(row: Row) -> dict[str, Any]:
    if row.answer_words is None:
        return _cell("–", None)
    parts = [f"ref {row.reference_words:.0f}" if row.reference_words is not None else ""]
    parts.append(f"{row.cut_at_limit:.0%} cut" if row.cut_at_limit is not None else "")
    return _cell(f"{row.answer_words:.0f}", row.answer_words, sub=", ".join(p for p in parts if p))


def _context_cell(row: Row) -> dict[str, Any]:
    """Mean prompt tokens, and below them the latency (mean seconds per answer) and the throughput, a line
    each."""
    seconds = "" if row.seconds_per_answer is None else f"latency {row.seconds_per_answer:.2f} s"
    tokens = "–" if row.prompt_tokens is None else f"{row.prompt_tokens:.0f}"
    rate = "" if row.answers_per_s is None else f"{row.answers_per_s:.3g} answers/s"
    return {**_cell(tokens, row.prompt_tokens, sub=seconds), "rate": rate}


def _row_view(row: Row, best: dict[str, float], key: str) -> dict[str, Any]:
    def score(column: str, text: str, sub: str = "") -> dict[str, Any]:
        return _cell(text, getattr(row, column), bold=is_best(row, column, best), sub=sub)

    def percent(column: str, interval: list[float] | None) -> dict[str, Any]:
        value = getattr(row, column)
        return score(column, "–" if value is None else f"{100 * value:.2f}", _interval(interval))

    return {
        "key": key,
        "split": row.split,
        "reference": row.source == REPORTED,
        "floor": row.source == FLOOR,
        "model": row.model,
        "glance": f"avg {metric_text(row.avg)} · F avg {metric_text(row.f_avg)}",  # a phone: under the name
        "title": " · ".join(x for x in (row.elicitation, row.spec, row.run) if x),
        "rank": _cell(rank_text(row, row.rank), row.rank, sub=interval_text(row.rank_interval)),
        "scores": [score(m, metric_text(getattr(row, m))) for m in SHOWN_SCORES],
        "rank_f": _cell(rank_text(row, row.rank_f), row.rank_f, sub=interval_text(row.rank_f_interval)),
        "length": _length_cell(row),
        "looping": _cell(share_text(row.looping), row.looping),
        "context": _context_cell(row),
        "wins": [percent("win_rate", row.win_rate_ci), percent("win_rate_lc", row.win_rate_lc_ci)],
        "wtl": _cell(wtl_text(row), row.wins),
        "n": _cell(n_display(row), row.n),
        "date": row.date,
        "flags": [{"name": f, "meaning": MEANINGS.get(f, "")} for f in row.flags],
        "notes": [w for w in row.warnings() if w != REPORTED],
        "partial": row.partial,
        "judge": row.judge,
        "has_roles": bool(row.per_role),
    }


def page_context(
    boards: Sequence[Board], title: str, generated: str, sessions: Sequence[SessionBoard] = ()
) -> dict[str, Any]:
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
        names = NameKey()
        panels = board_figure(board, names)
        views.append(
            {
                "id": board.id,
                "split": board.split,
                "split_label": SPLIT_LABELS[board.split],
                "heading": board_heading(board),
                "reference": board.reference,
                "unranked_note": board.unranked_note(),
                "order_note": board.order_note(),
                "rank_note": board.rank_note,
                "panels": panels,
                "name_key": names.entries(),
                "panel_width": WIDTH,
                "rows": rows,
            }
        )
    splits = [(s, label) for s, label in SPLIT_LABELS.items() if any(b.split == s for b in boards)]
    return {
        "title": title,
        "about": ABOUT_LEAD,
        "about_more": ABOUT_MORE,
        "flag_legend": FLAG_LEGEND,
        "generated": generated,
        "boards": views,
        "splits": splits,
        "metrics": [{"label": m.label, "meaning": m.meaning} for m in METRICS],
        "metric_labels": named([m.label for m in METRICS]),
        "roles": {"metrics": list(METRIC_KEYS), "rows": roles},
        "session_boards": page_boards(sessions),
        "session_about": SESSIONS_ABOUT,
        **page_script(),
    }


@cache
def page_script() -> dict[str, Any]:
    """The page's script (a static file, trusted) and its CSP hash: the page runs no other script."""
    text = (TEMPLATE_DIR / PAGE_SCRIPT).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return {"script": markupsafe.Markup(text), "script_hash": f"sha256-{digest}"}


def to_html(
    boards: Sequence[Board],
    *,
    title: str = "RoleBench leaderboard",
    generated: str = "",
    sessions: Sequence[SessionBoard] = (),
) -> str:
    return (
        html_environment(TEMPLATE_DIR)
        .get_template(PAGE_TEMPLATE)
        .render(**page_context(boards, title, generated, sessions))
    )
