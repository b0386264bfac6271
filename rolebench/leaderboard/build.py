"""A built leaderboard folder: which files it holds and how `rolebench leaderboard build` writes them.

```
OUT/leaderboard.md, .csv, .tex, .json, index.html   the tables and the page
OUT/results/<run>/results.json                      every result file they were built from
OUT/results/<run>/item_scores.json                  a ranked run's per-item scores (rank intervals; no text)
OUT/sessions.csv                                    the session boards' rows (`leaderboard.sessions`)
OUT/results/<run>/session_turns.json                a run's session turns: placements, winners (no text)
```
so that a built (and published) folder is its own source: `rolebench leaderboard build OUT/results`
makes the same tables again (the repository's `leaderboard/` has this layout).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rolebench.leaderboard.boards import OURS, Board, collect_scored, find_results
from rolebench.leaderboard.items import RunScores, write_item_scores
from rolebench.leaderboard.session_tables import sessions_csv, sessions_latex, sessions_markdown
from rolebench.leaderboard.session_turns import write_session_turns
from rolebench.leaderboard.sessions import SessionBoard, collect_sessions
from rolebench.leaderboard.tables import to_csv, to_latex, to_markdown
from rolebench.leaderboard.webpage import to_html
from rolebench.run.folder import RESULTS_FILE
from rolebench.storage.files import write_text_atomic

MARKDOWN, CSV, LATEX, HTML, JSON, SESSIONS_CSV = (
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.tex",
    "index.html",
    "leaderboard.json",
    "sessions.csv",
)
OUTPUT_FILES = (MARKDOWN, CSV, LATEX, HTML, JSON, SESSIONS_CSV)
RESULTS_DIR = "results"  # OUT/results/<run>/results.json: the result files the tables are built from
DEFAULT_TITLE = "RoleBench leaderboard"


def results_date(boards: Sequence[Board], sessions: Sequence[SessionBoard] = ()) -> str:
    """The newest date among our rows (the session boards' among them): pages say "results up to ..." so
    a rebuild changes no byte."""
    dates = [r.date for b in boards for r in b.rows if r.source == OURS and r.date]
    dates += [r.date for b in sessions for r in b.rows if r.source == OURS and r.date]
    return f"from results up to {max(dates)}" if dates else "from the paper's reported numbers only"


def write_leaderboard(
    boards: Sequence[Board],
    out: Path,
    *,
    title: str = DEFAULT_TITLE,
    sessions: Sequence[SessionBoard] = (),
) -> list[Path]:
    """Write Markdown, CSV, LaTeX, HTML and JSON tables into `out` (each atomically), the session boards
    among them (and in sessions.csv, when there are any); return their paths."""
    generated = results_date(boards, sessions)
    document = {
        "title": title,
        "generated": generated,
        "boards": [b.to_dict() for b in boards],
        **({"session_boards": [b.to_dict() for b in sessions]} if sessions else {}),
    }
    texts = {
        MARKDOWN: "\n".join(t for t in (to_markdown(boards, title), sessions_markdown(sessions)) if t),
        CSV: to_csv(boards),
        LATEX: "\n".join(t for t in (to_latex(boards), sessions_latex(sessions)) if t),
        HTML: to_html(boards, title=title, generated=generated, sessions=sessions),
        JSON: json.dumps(document, ensure_ascii=False, indent=1) + "\n",
        **({SESSIONS_CSV: sessions_csv(sessions)} if sessions else {}),
    }
    written = []
    for name, text in texts.items():
        write_text_atomic(out / name, text)
        written.append(out / name)
    return written


def copy_results(
    found: Sequence[tuple[Path, str]], out: Path, scores: Mapping[str, RunScores] | None = None
) -> list[Path]:
    """Each result file into OUT/results/<run>/results.json (atomically; a file already there is itself
    left alone), and the per-item scores of the runs in `scores` (the ranked ones) beside it
    (`item_scores.json`, no text), so that a build from OUT/results gives the same rank intervals; the
    paths. A second run of the same name gets a suffix."""
    copies, used = [], set()
    for path, name in found:
        folder, number = name, 1
        while folder in used:
            number += 1
            folder = f"{name}-{number}"
        used.add(folder)
        target = out / RESULTS_DIR / folder / RESULTS_FILE
        if target.is_file() and target.resolve() == path.resolve():
            copies.append(target)  # built in place: the folder is its own source
            continue
        write_text_atomic(target, path.read_text(encoding="utf-8"))
        copies.append(target)
        kept = write_item_scores(target.parent, (scores or {}).get(name) or {})
        turns = write_session_turns(target.parent, path)
        copies += [p for p in (kept, turns) if p]
    return copies


def build(
    paths: Iterable[str | Path],
    out: Path,
    *,
    title: str = DEFAULT_TITLE,
    reference: bool = True,
    names: Mapping[str, str] | None = None,
) -> tuple[list[Board], list[Path]]:
    """Collect result files under `paths` and write the leaderboard folder `out` (tables, page, and a copy
    of every result file with its per-item scores); the boards and the files written. `names`: the names
    a user gives models, by run name or model spec."""
    paths = list(paths)
    boards, scores = collect_scored(paths, reference=reference, names=names)
    sessions = collect_sessions(paths, names=names)
    written = write_leaderboard(boards, Path(out), title=title, sessions=sessions)
    return boards, written + copy_results(find_results(paths), Path(out), scores)
