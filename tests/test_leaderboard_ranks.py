"""Rank intervals on the leaderboard (the items of a board's split resampled jointly for all its ranked
rows), ties, the per-item scores a built folder keeps, the picture of every board, and the names tables give
models."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.leaderboard.boards import collect
from rolebench.leaderboard.build import build
from rolebench.leaderboard.drawing import text_width
from rolebench.leaderboard.figure import NameKey, board_figure, legend_lines
from rolebench.leaderboard.items import ITEM_SCORES_FILE
from rolebench.run.folder import read_results, read_samples, write_results, write_samples
from tests.test_leaderboard import variant

REPO_ROOT = Path(__file__).resolve().parent.parent
ROLEGPT = "RoleGPT (released baseline answers)"


def shuffled(source: Path, target: Path, *, name: str, scale: float, seed: int) -> Path:
    """Another model as close to `source` as can be: its per-item scores those of `source` dealt to other
    items (the same means) and scaled; each item is scored differently, so resamples can swap the two."""
    variant(source, target, name=name, scale=scale)
    results = read_results(target)
    for task, entry in results.results.items():
        records = read_samples(target, task)
        scores = [(r.scores, r.protocol_scores) for r in records]
        random.Random(seed).shuffle(scores)
        records = [
            r.model_copy(update={"scores": s, "protocol_scores": p})
            for r, (s, p) in zip(records, scores, strict=True)
        ]
        entry.samples_sha256 = write_samples(target, task, records)
    write_results(target, results)
    return target


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RoleGPT's released answers on the demo, a model dealt the same scores (scaled by .98), a weak one
    (scaled by .3), a partial run, and the floors as runs of their own."""
    root = tmp_path_factory.mktemp("ranked")
    for model in ("rolegpt", "question", "description"):
        out = root / f"demo-{model}"
        assert (
            main(
                [
                    "evaluate",
                    "--model",
                    f"baseline:{model}",
                    "--tasks",
                    "rolebench_demo",
                    "--output",
                    str(out),
                    "--no-progress",
                ]
            )
            == 0
        )
    shuffled(root / "demo-rolegpt", root / "demo-close", name="close model", scale=0.98, seed=1)
    variant(root / "demo-rolegpt", root / "demo-weak", name="weak model", scale=0.3)
    out = root / "demo-partial"
    assert (
        main(
            [
                "evaluate",
                "--model",
                "baseline:rolegpt",
                "--tasks",
                "rolebench_demo",
                "--limit",
                "3",
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    return root


def ours(boards):
    return next(b for b in boards if not b.reference)


def by_run(board):
    """The board's rows of our runs (not the floors) by run name."""
    return {r.run: r for r in board.rows if r.source != "floor"}


def test_rank_intervals_and_ties_from_the_items(runs):
    board = ours(collect([runs]))
    assert board.rank_note == ""
    rows = by_run(board)
    rolegpt, close, weak = rows["demo-rolegpt"], rows["demo-close"], rows["demo-weak"]
    assert (rolegpt.rank, close.rank, weak.rank) == (1, 2, 3)
    # 2% apart on 27 items: the resamples rank either first; the weak model is third in every resample
    assert rolegpt.rank_interval == [1, 2] and close.rank_interval == [1, 2] and weak.rank_interval == [3, 3]
    assert rolegpt.tied_with == ["close model"] and close.tied_with == [ROLEGPT] and weak.tied_with == []
    assert "statistically tied with close model (rank intervals overlap)" in rolegpt.warnings()
    assert rolegpt.avg_ci[0] < rolegpt.avg < rolegpt.avg_ci[1] and weak.avg_ci[1] < close.avg_ci[0]
    assert weak.rank_f_interval == [3, 3] and rolegpt.f_avg_ci[0] < rolegpt.f_avg < rolegpt.f_avg_ci[1]
    partial = rows["demo-partial"]
    assert partial.rank is None and partial.rank_interval is None and partial.tied_with == []
    assert all(r.rank_interval is None for r in board.rows if r.source == "floor")


def test_a_scaled_copy_is_never_ranked_above_its_source(runs, tmp_path):
    """The resampling is paired: a copy of RoleGPT scaled by .98 is below it on every resample of the
    items, however close (an unpaired interval of each row alone would overlap)."""
    root = tmp_path / "runs"
    shutil.copytree(runs / "demo-rolegpt", root / "demo-rolegpt")
    variant(runs / "demo-rolegpt", root / "demo-scaled", name="scaled", scale=0.98)
    rows = by_run(ours(collect([root])))
    assert rows["demo-rolegpt"].rank_interval == [1, 1] and rows["demo-scaled"].rank_interval == [2, 2]
    low, high = rows["demo-rolegpt"].avg_ci
    assert low < rows["demo-scaled"].avg < high  # each row's own interval holds the other's avg


def test_every_format_carries_the_intervals(runs, tmp_path):
    build([runs], tmp_path)
    document = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))
    rows = {r["run"]: r for b in document["boards"] for r in b["rows"]}
    assert rows["demo-rolegpt"]["rank_interval"] == [1, 2] and rows["demo-rolegpt"]["tied_with"] == [
        "close model"
    ]
    table = {
        r["run"]: r
        for r in csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text(encoding="utf-8")))
    }
    assert (table["demo-weak"]["rank_best"], table["demo-weak"]["rank_worst"]) == ("3", "3")
    assert table["demo-rolegpt"]["tied_with"] == "close model" and float(table["demo-rolegpt"]["avg_low"]) > 0
    assert table["demo-partial"]["rank_best"] == ""
    markdown = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    assert (
        "| 1 (1–2) " in markdown
        and "| 3 (3–3) " in markdown
        and "statistically tied with close model" in markdown
    )
    latex = (tmp_path / "leaderboard.tex").read_text(encoding="utf-8")
    assert "1 (1–2)" in latex and "Rank (95\\% CI)" in latex
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert '<span class="sub">1–2</span>' in page and "statistically tied with close model" in page


def test_a_built_folder_ranks_again_from_its_own_copies(runs, tmp_path):
    """OUT/results holds each ranked run's per-item scores (numbers, no text): a build from it alone gives
    the same intervals, byte for byte."""
    build([runs], tmp_path / "first")
    copies = tmp_path / "first" / "results"
    assert sorted(p.parent.name for p in copies.rglob(ITEM_SCORES_FILE)) == [
        "demo-close",
        "demo-rolegpt",
        "demo-weak",
    ]
    kept = json.loads((copies / "demo-rolegpt" / ITEM_SCORES_FILE).read_text(encoding="utf-8"))
    task = kept["tasks"]["rolebench_demo_general"]
    assert set(task) == {"split", "samples_sha256", "ids", "scores"} and set(task["scores"]) == {
        "rolellm",
        "rolebench",
    }
    text = (copies / "demo-rolegpt" / ITEM_SCORES_FILE).read_text(encoding="utf-8")
    samples = read_samples(runs / "demo-rolegpt", "rolebench_demo_general")
    assert not any(s.output and s.output[:40] in text for s in samples)  # no answer, no question
    assert not any(s.question[:40] in text for s in samples)
    build([copies], tmp_path / "second")
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "leaderboard.tex", "index.html"):
        assert (tmp_path / "second" / name).read_bytes() == (tmp_path / "first" / name).read_bytes(), name


def test_without_per_item_scores_the_board_says_so(runs, tmp_path):
    for name in ("demo-rolegpt", "demo-close"):
        (tmp_path / name).mkdir()
        shutil.copy(runs / name / "results.json", tmp_path / name / "results.json")  # no samples beside it
    board = ours(collect([tmp_path]))
    assert board.rank_note.startswith("no rank intervals: no per-item scores of demo-")
    assert all(r.rank_interval is None for r in board.rows)
    build([tmp_path], tmp_path / "out")
    assert board.rank_note in (tmp_path / "out" / "leaderboard.md").read_text(encoding="utf-8")
    assert board.rank_note in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    alone = tmp_path / "alone"
    (alone / "demo-rolegpt").mkdir(parents=True)
    shutil.copy(runs / "demo-rolegpt" / "results.json", alone / "demo-rolegpt" / "results.json")
    row = ours(collect([alone])).rows[0]
    assert row.rank == 1 and row.rank_interval == [1, 1] and row.avg_ci is None  # one ranked row: first


def test_samples_that_do_not_give_back_the_numbers_are_not_used(runs, tmp_path):
    shutil.copytree(runs / "demo-rolegpt", tmp_path / "demo-rolegpt")
    shutil.copytree(runs / "demo-close", tmp_path / "demo-close")
    results = read_results(tmp_path / "demo-close")
    results.groups["rolebench_demo"].value("rolellm")["avg"] = 0.9  # edited by hand: its samples disagree
    write_results(tmp_path / "demo-close", results)
    board = ours(collect([tmp_path]))
    assert board.rank_note == "no rank intervals: the samples of demo-close do not give back its avg"


# ---- the picture ------------------------------------------------------------------------------------


def test_every_board_has_a_picture_with_a_mark_for_each_ranked_row(runs):
    boards = collect([runs])
    board = ours(boards)
    scores, lengths = board_figure(board)
    ranked = [r for r in board.rows if r.rank is not None]
    assert [m["row"] for m in scores.marks] == [r.run for r in ranked]
    assert {m["row"] for m in lengths.marks if m["cls"] == "dot"} == {r.run for r in ranked}
    assert {m["row"] for m in lengths.marks if m["cls"] == "open"} == {"demo-partial"}
    assert sum(1 for line in scores.lines if line["cls"] == "floor") == 2  # the question, the description
    assert any(r["cls"] == "inflated" for r in lengths.rects)  # past twice the references' length
    paper = [b for b in collect([REPO_ROOT / "leaderboard" / "results"]) if b.reference]
    assert paper and all(len(board_figure(b)) == 1 for b in paper)  # the paper's rows: scores, no lengths


def test_names_too_long_for_the_picture_are_numbered_once_and_kept_whole():
    key = NameKey()
    long_a, long_b = "org/a-very-long-model-name-" + "x" * 40, "org/a-very-long-model-name-" + "y" * 40
    assert key.label("short", 118) == "short"  # a name that fits is drawn as it is
    a = key.label(long_a, 118)
    b = key.label(long_b, 118)
    assert a.startswith("[1] org/") and a.endswith("…") and text_width(a) <= 118
    assert b.startswith("[2] org/") and b.endswith("…")  # two names with one start: told apart by number
    assert key.label(long_a, 120).startswith("[1] ")  # the same name in the other panel: the same number
    assert key.entries() == [(1, long_a), (2, long_b)]


def test_labels_fit_the_panel():
    assert legend_lines(
        ["dot: recall", "ring: F-measure", "dashed: floors", "shaded: over 2× ref length"]
    ) == [
        "dot: recall; ring: F-measure; dashed: floors",
        "shaded: over 2× ref length",
    ]
    assert text_width("孙悟空") == 3 * 11 and text_width("abc") < 3 * 11


# ---- model names ------------------------------------------------------------------------------------


def test_model_names_come_from_the_spec_or_the_user_never_from_gguf_metadata(tmp_path, capsys):
    published = REPO_ROOT / "leaderboard" / "results" / "demo-smollm2-135m" / "results.json"
    if not published.is_file():
        pytest.skip("leaderboard/results/ is not in this checkout")
    (tmp_path / "runs" / "smol").mkdir(parents=True)
    shutil.copy(published, tmp_path / "runs" / "smol" / "results.json")
    assert "Smollm2 135M" in read_results(tmp_path / "runs" / "smol").config.model["name"]  # the GGUF's
    assert [r.model for r in ours(collect([tmp_path / "runs"])).rows][0] == "smollm2:135m"
    named = collect([tmp_path / "runs"], names={"smollm2:135m": "SmolLM2-135M-Instruct (Q4_1)"})
    assert ours(named).rows[0].model == "SmolLM2-135M-Instruct (Q4_1)"
    out = tmp_path / "out"
    assert (
        main(["leaderboard", "build", str(tmp_path / "runs"), "--out", str(out), "--name", "smol=My SmolLM2"])
        == 0
    )
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "My SmolLM2" in page and "Smollm2 135M 8k" not in page
    assert main(["leaderboard", "build", str(tmp_path / "runs"), "--out", str(out), "--name", "smol"]) == 2
    assert "bad --name 'smol'" in capsys.readouterr().err


def test_per_item_scores_read_from_samples_are_the_samples_own(runs, tmp_path):
    """The samples files are read without decoding answers and prompts: the same ids and scores as the typed
    samples, even for answers that hold the key's name, quotes, braces or a line separator."""
    from rolebench.leaderboard.items import read_item_scores

    run = shutil.copytree(runs / "demo-rolegpt", tmp_path / "run")
    results = read_results(run)
    for task, entry in results.results.items():
        records = read_samples(run, task)
        tricky = 'he said "protocol_scores": {"rolellm": {"spe": 1.0}}} \u2028 {"id": "x"}'
        records[0] = records[0].model_copy(update={"output": tricky, "question": tricky})
        entry.samples_sha256 = write_samples(run, task, records)
    write_results(run, results)
    found = read_item_scores(run / "results.json", read_results(run))
    for task in results.results:
        records = read_samples(run, task)
        assert found[task].ids == [r.id for r in records]
        for protocol, block in found[task].scores.items():
            for metric, values in block.items():
                expected = [r.protocol_scores.get(protocol, {}).get(metric) for r in records]
                assert [None if v != v else v for v in values.tolist()] == [
                    None if v is None else round(v, 6) for v in expected
                ]
