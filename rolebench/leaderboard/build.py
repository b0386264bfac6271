"""A built leaderboard folder: which files it holds and how `rolebench leaderboard build` writes them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from rolebench.leaderboard.boards import OURS, Board, collect
from rolebench.leaderboard.tables import to_csv, to_latex, to_markdown
from rolebench.leaderboard.webpage import to_html
from rolebench.storage.files import write_text_atomic

MARKDOWN, CSV, LATEX, HTML, JSON = (
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.tex",
    "index.html",
    "leaderboard.json",
)
OUTPUT_FILES = (MARKDOWN, CSV, LATEX, HTML, JSON)
DEFAULT_TITLE = "RoleBench leaderboard"


def results_date(boards: Sequence[Board]) -> str:
    """The newest date among our rows: pages say "results up to ..." so a rebuild changes no byte."""
    dates = [r.date for b in boards for r in b.rows if r.source == OURS and r.date]
    return f"from results up to {max(dates)}" if dates else "from the paper's reported numbers only"


def write_leaderboard(boards: Sequence[Board], out: Path, *, title: str = DEFAULT_TITLE) -> list[Path]:
    """Write Markdown, CSV, LaTeX, HTML and JSON tables into `out` (each atomically); return their paths."""
    generated = results_date(boards)
    document = {"title": title, "generated": generated, "boards": [b.to_dict() for b in boards]}
    texts = {
        MARKDOWN: to_markdown(boards, title),
        CSV: to_csv(boards),
        LATEX: to_latex(boards),
        HTML: to_html(boards, title=title, generated=generated),
        JSON: json.dumps(document, ensure_ascii=False, indent=1) + "\n",
    }
    written = []
    for name, text in texts.items():
        write_text_atomic(out / name, text)
        written.append(out / name)
    return written


def build(
    paths: Iterable[str | Path], out: Path, *, title: str = DEFAULT_TITLE, reference: bool = True
) -> tuple[list[Board], list[Path]]:
    """Collect result files under `paths` and write the leaderboard folder `out`."""
    boards = collect(paths, reference=reference)
    return boards, write_leaderboard(boards, Path(out), title=title)
