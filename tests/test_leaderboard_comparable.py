"""A board ranks rows only on the same metrics and the same items, and says why when it ranks nothing
(issue 36 items 2-3, issue 35 item 8's leaderboard part). Runs of the packaged demo (no RoleBench files
needed), by the data-only baselines."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.leaderboard.boards import FLOOR, collect
from rolebench.run.folder import read_results, write_results

DEMO = "rolebench_demo"


def evaluate(output: Path, model: str, *args: str) -> None:
    code = main(
        ["evaluate", "--model", model, "--tasks", DEMO, "--no-progress", "--output", str(output), *args]
    )
    assert code == 0


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("comparable")
    evaluate(root / "full" / "rolegpt", "baseline:rolegpt")
    evaluate(root / "full" / "question", "baseline:question")
    evaluate(root / "limited" / "rolegpt", "baseline:rolegpt", "--limit", "3")
    evaluate(root / "limited" / "description", "baseline:description", "--limit", "4")
    return root


def without_spe(source: Path, target: Path, name: str) -> None:
    """A copy of a run as another model whose group avg covers CUS and RAW only (as a split without SPE)."""
    shutil.copytree(source, target)
    results = read_results(target)
    results.config.model = {**results.config.model, "name": name, "spec": name}
    group = results.groups[DEMO]
    for block in (group, *(group.value(p) or {} for p in ("rolellm", "rolebench"))):
        if isinstance(block, dict):
            block["avg"] = 0.99  # above every complete row: sorted first if wrongly compared
            block["spe"] = None
        else:
            block.avg, block.spe = 0.99, None
    write_results(target, results)


def test_a_board_of_limit_runs_says_why_nothing_is_ranked(demo_runs, tmp_path, capsys):
    out = tmp_path / "board"
    capsys.readouterr()
    assert main(["leaderboard", "build", str(demo_runs / "limited"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Nothing ranked: every row is partial" in printed, printed
    assert f"--tasks {DEMO}` without --limit" in printed
    for page in ("index.html", "leaderboard.md", "leaderboard.json", "leaderboard.tex"):
        assert "Nothing ranked: every row is partial" in (out / page).read_text(encoding="utf-8"), page
    (board,) = [b for b in collect([demo_runs / "limited"], reference=False)]
    assert all(r.rank is None for r in board.rows)


def test_a_board_with_a_ranked_row_has_no_such_note(demo_runs):
    boards = collect([demo_runs / "full"], reference=False)
    assert [b.unranked_note() for b in boards] == [""]


def test_rows_averaging_other_metrics_are_not_ranked_against_the_others(demo_runs, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(demo_runs / "full", runs)
    without_spe(runs / "rolegpt", runs / "no-spe", "no-spe-model")
    (board,) = collect([runs], reference=False)
    odd = next(r for r in board.rows if r.model == "no-spe-model")
    rolegpt = next(r for r in board.rows if r.spec == "baseline:rolegpt")
    assert rolegpt.rank == 1 and odd.rank is None
    assert "not comparable: its avg is over CUS and RAW over" in odd.not_comparable
    assert "the ranked rows' over CUS, RAW and SPE over" in odd.not_comparable
    assert odd.not_comparable in odd.warnings()
    assert board.rows.index(odd) > board.rows.index(rolegpt)  # listed apart, after the ranked rows


def test_a_floor_run_on_fewer_items_is_not_the_board_floor(demo_runs, tmp_path):
    """A floor run that answers only some items (baseline:train where the train file asks few of the test
    questions) is shown as not comparable; the floor on every item is the one the runs record."""
    runs = tmp_path / "runs"
    shutil.copytree(demo_runs / "full", runs)
    results = read_results(runs / "question")
    for entry in results.results.values():
        entry.n_not_covered = entry.n - 2  # answers two items of each task
    write_results(runs / "question", results)
    (board,) = collect([runs], reference=False)
    floors = [r for r in board.rows if r.source == FLOOR and r.spec == "baseline:question"]
    assert len(floors) == 2, [(r.run, r.n, r.n_not_covered) for r in floors]
    few = next(r for r in floors if r.n_not_covered)
    full = next(r for r in floors if not r.n_not_covered)
    assert few.not_comparable.startswith("not comparable: its avg is over") and not full.not_comparable
    assert [r.rank for r in floors] == [None, None]


def test_beside_limit_rows_the_floors_are_on_their_items(demo_runs, tmp_path):
    """A floor run of the whole split beside a --limit row says it is not comparable; the floor on the
    limited row's items (as the row records it) is shown beside it."""
    runs = tmp_path / "runs"
    shutil.copytree(demo_runs / "limited", runs / "limited")
    shutil.copytree(demo_runs / "full" / "question", runs / "question")
    (board,) = collect([runs], reference=False)
    limited = next(r for r in board.rows if r.spec == "baseline:rolegpt")
    floors = [r for r in board.rows if r.spec == "baseline:question" and r.source == FLOOR]
    whole = next(r for r in floors if r.run == "question")
    assert "the partial rows' over" in whole.not_comparable, whole.not_comparable
    same = next(r for r in floors if r.run != "question")
    assert not same.not_comparable and same.n == limited.n - (limited.n_not_covered or 0)
    assert f"scored on the items {limited.run} answered" in same.warnings()


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("gnp\u202eexe", "gnp\\u202eexe"),  # a bidi override: would read as "gnpexe" reversed ("exe.png")
        ("nul\x00byte", "nul\\x00byte"),
        ("zero\u200bwidth\nline", "zero\\u200bwidth\\x0aline"),
        ("x" * 10_000, "… (10,000 characters)"),
    ],
)
def test_model_names_are_shown_as_what_they_are(demo_runs, tmp_path, given, shown):
    """Bidi controls, NUL bytes and other invisible characters are written as escapes, and a 10,000-character
    name is cut saying its length, in every output (issue 35 item 11)."""
    out = tmp_path / "board"
    assert (
        main(
            ["leaderboard", "build", str(demo_runs / "full"), "--out", str(out), "--name", f"rolegpt={given}"]
        )
        == 0
    )
    (board,) = collect([demo_runs / "full"], reference=False, names={"rolegpt": given})
    row = next(r for r in board.rows if r.run == "rolegpt")
    assert shown in row.model and len(row.model) <= 160
    for page in ("index.html", "leaderboard.md", "leaderboard.csv", "leaderboard.tex", "leaderboard.json"):
        text = (out / page).read_text(encoding="utf-8")
        assert not any(c in text for c in "\x00\u202e\u200b"), page
        assert "x" * 200 not in text, page
