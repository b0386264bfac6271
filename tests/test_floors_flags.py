"""Numbers no one can inflate: the floors (null baselines), the flags a number carries, and where they show.

On the real files: `baseline:question` and `baseline:description` answer every item of every released split;
every run scores both floors on its own items; the released RoleGPT answers carry no flag; SmolLM2-135M on
Chinese (it loops at the token limit) carries `length-inflated` and `looping`, and sits below the floor.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.run.folder import read_results, read_samples
from rolebench.scoring import flags
from rolebench.scoring.flags import (
    BELOW_FLOOR,
    LENGTH_INFLATED,
    LOOPING,
    answer_flags,
    below_floor,
    length_inflated,
)
from rolebench.scoring.protocols import get_protocol

SPLIT_TASKS = {
    "rolebench_eng_instruct_specific": 4750,
    "rolebench_eng_role_general": 5000,
    "rolebench_eng_role_specific": 2534,
    "rolebench_zh_general": 1451,
    "rolebench_zh_specific": 239,
}


def run(model: str, tasks: tuple[str, ...], out: Path, data: Path | None = None, **options):
    return evaluate(
        **dict(
            model=model,
            tasks=tasks,
            output=out,
            data_dir=str(data) if data else None,
            progress=False,
            **options,
        )
    )


# ---- the rules -------------------------------------------------------------------------------------


def test_length_rule_ratio_or_cut_share():
    assert not length_inflated(80.0, 40.0)  # exactly twice: not over
    assert length_inflated(80.1, 40.0)
    assert length_inflated(50.0, 40.0, cut_share=0.26)
    assert not length_inflated(50.0, 40.0, cut_share=0.25)
    assert (
        not length_inflated(None, 40.0) and not length_inflated(90.0, None) and not length_inflated(9.0, 0.0)
    )


def test_answer_flags_from_a_lengths_block():
    lengths = {"answer_words_mean": 30.0, "reference_words_mean": 40.0, "cut_at_limit": 0.0, "looping": 0.1}
    assert answer_flags(lengths) == []  # 10% looping is not over 10%
    assert answer_flags({**lengths, "looping": 0.11}) == [LOOPING]
    assert answer_flags({**lengths, "answer_words_mean": 81.0, "looping": 0.5}) == [LENGTH_INFLATED, LOOPING]
    assert answer_flags(None) == [] and answer_flags({}) == []
    assert all(flags.MEANINGS[f] for f in flags.ORDER)  # every flag has its one-line meaning


def test_below_floor_compares_under_one_protocol():
    floors = {
        "baseline:question": {"rolellm": {"cus": 0.40, "spe": 0.20}, "rolebench": {"cus": 0.29}},
        "baseline:description": {"rolellm": {"cus": 0.23, "spe": 0.30}},
    }
    assert below_floor({"cus": 0.40, "spe": 0.31}, floors, "rolellm") == ["cus"]  # at a floor counts
    assert below_floor({"cus": 0.41, "spe": 0.25}, floors, "rolellm") == ["spe"]
    assert below_floor({"cus": 0.30}, floors, "rolebench") == []
    assert below_floor({"cus": None}, floors, "rolellm") == []


# ---- the floors as models ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("floor", "tasks"),
    [
        ("question", tuple(SPLIT_TASKS)),
        ("description", ("rolebench_eng_role_specific", "rolebench_zh_general")),
    ],
)
def test_a_floor_answers_every_item_of_every_released_split(floor, tasks, rolebench_data, tmp_path):
    results = run(f"baseline:{floor}", tasks, tmp_path / floor, rolebench_data)
    for task in tasks:
        size = SPLIT_TASKS[task]
        result = results.results[task]
        assert (result.n, result.n_generated, result.n_not_covered) == (size, size, 0), task
        assert BELOW_FLOOR not in result.value("flags")  # the floors are what others are held against
    samples = read_samples(tmp_path / floor, "rolebench_eng_role_specific")
    expected = [s.question if floor == "question" else s.description for s in samples]
    assert [s.output for s in samples] == expected
    # the run's own numbers are the floor every other run records for the same items
    recorded = results.results["rolebench_zh_general"].value("floors")[f"baseline:{floor}"]
    assert recorded["rolellm"]["cus"] == results.results["rolebench_zh_general"].value("cus")
    assert read_results(tmp_path / floor).config.model["name"].startswith("floor: ")


def test_rolegpt_carries_no_flag_and_records_the_floors(rolebench_data, tmp_path):
    results = run(
        "baseline:rolegpt", ("rolebench_zh", "rolebench_eng_role_specific"), tmp_path, rolebench_data
    )
    for name, entry in [*results.results.items(), *results.groups.items()]:
        assert entry.value("flags") == [], name
    zh = results.results["rolebench_zh_general"].value("floors")
    assert zh["baseline:question"]["rolellm"]["cus"] == pytest.approx(0.4011, abs=5e-5)  # the question alone
    assert zh["baseline:question"]["rolebench"]["cus"] == pytest.approx(0.2866, abs=5e-5)
    assert zh["baseline:description"]["rolellm"]["cus"] == pytest.approx(0.2280, abs=5e-5)
    group = results.groups["rolebench_zh"].value("floors")["baseline:question"]["rolellm"]
    assert group["avg"] == pytest.approx((group["cus"] + group["spe"]) / 2)
    # the floors on role generalization are scored on the 696 items RoleGPT answered, not the 2,534
    specific = results.results["rolebench_eng_role_specific"]
    assert specific.n_generated == 696
    samples = [s for s in read_samples(tmp_path, "rolebench_eng_role_specific") if s.output is not None]
    protocol = get_protocol("rolellm")
    own = [protocol.score(s.question, s.references, "en") for s in samples]
    assert specific.value("floors")["baseline:question"]["rolellm"]["spe"] == pytest.approx(
        sum(own) / len(own)
    )


def test_smollm2_on_chinese_is_length_inflated_looping_and_below_the_floor(
    smollm2_gguf, rolebench_data, tmp_path, capsys
):
    """The embedded model speaks no Chinese: its answers run to the token limit, repeating themselves."""
    out = tmp_path / "smollm2-zh"
    code = main(
        [
            "evaluate",
            "--model",
            "smollm2:135m",
            "--tasks",
            "rolebench_zh_general",
            "--limit",
            "3",
            "--max-new-tokens",
            "128",
            "--output",
            str(out),
            "--data-dir",
            str(rolebench_data),
            "--no-progress",
        ]
    )
    assert code == 0
    task = read_results(out).results["rolebench_zh_general"]
    assert task.lengths.cut_at_limit > 0.25 and task.lengths.looping > 0.10
    assert task.value("flags")[:2] == [LENGTH_INFLATED, LOOPING]
    printed = capsys.readouterr().out
    assert "length-inflated, looping" in printed
    assert f"flag {flags.describe(LENGTH_INFLATED)}" in printed  # each flag with its one-line meaning
    assert "floors (rolellm / rolebench): baseline:question CUS" in printed


def test_rescoring_an_old_results_file_adds_floors_and_flags(rolebench_data, tmp_path):
    out = tmp_path / "old"
    run("baseline:rolegpt", ("rolebench_zh_specific",), out, rolebench_data, limit=10)
    path = out / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    for task in document["results"].values():
        task.pop("floors"), task.pop("flags")
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["score", str(out), "--protocol", "rolebench"]) == 0
    task = read_results(out).results["rolebench_zh_specific"]
    assert task.value("flags") == [] and set(task.value("floors")) == {
        "baseline:question",
        "baseline:description",
        "baseline:train",  # the samples carry the train join: the split's train file was read
    }


def test_a_mistyped_bootstrap_setting_is_one_line_not_a_crash(rolebench_data, tmp_path, capsys):
    out = tmp_path / "run"
    run("baseline:rolegpt", ("rolebench_zh_specific",), out, rolebench_data, limit=5)
    path = out / "results.json"
    for bad, message in (
        ({"resampels": 10}, "unknown bootstrap setting 'resampels'"),
        ({"resamples": "many"}, "bootstrap resamples must be an integer >= 0, not 'many'"),
        ({"confidence": 1.5}, "bootstrap confidence must be a number in (0, 1)"),
    ):
        document = json.loads(path.read_text(encoding="utf-8"))
        document["config"]["bootstrap"] = {"resamples": 100, "confidence": 0.95, "seed": 0, **bad}
        path.write_text(json.dumps(document), encoding="utf-8")
        assert main(["leaderboard", "build", str(out), "--out", str(tmp_path / "board")]) == 2
        err = capsys.readouterr().err
        assert message in err and "config.bootstrap" in err and "internal error" not in err
        assert f"rolebench score {out}" in err  # the way out: derive it again from the run's files
        assert main(["report", str(out)]) == 0  # a command on the run folder derives results.json again
        err = capsys.readouterr().err
        assert "results.json was damaged" in err and message in err
        assert read_results(out).config.bootstrap["resamples"] == 1000  # the run's own setting again


def test_a_partly_covered_baseline_run_names_the_file_behind_the_gap(rolebench_data, tmp_path, capsys):
    assert main(["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_eng_role", "--output",
                 str(tmp_path), "--data-dir", str(rolebench_data), "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert (
        "rolebench_eng_role_general: not covered: the data has no "
        "rolebench-eng/role-generalization/general/rolegpt_baseline.jsonl"
    ) in out
    assert (
        "rolebench_eng_role_specific: 1,838 of 2,534 not covered: "
        "rolebench-eng/role-generalization/role_specific/rolegpt_baseline.jsonl answers 696 of the 2,534"
    ) in out


@pytest.mark.parametrize(
    ("field", "bad", "message"),
    [
        ("floors", {"baseline:question": "x"}, "floors must map each floor to {protocol: {metric: number}}"),
        ("floors", {"baseline:question": {"rolellm": {"cus": "high"}}}, "floors must map each floor"),
        ("flags", "looping", "flags must be a list of names"),
    ],
)
def test_floors_or_flags_of_another_shape_are_one_line(field, bad, message, rolebench_data, tmp_path, capsys):
    out = tmp_path / "run"
    run("baseline:rolegpt", ("rolebench_zh_specific",), out, rolebench_data, limit=5)
    path = out / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["results"]["rolebench_zh_specific"][field] = bad
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["leaderboard", "build", str(out), "--out", str(tmp_path / "board")]) == 2
    err = capsys.readouterr().err
    assert message in err and "results.rolebench_zh_specific" in err and err.count("\n") == 1
    assert main(["report", str(out)]) == 0  # a command on the run folder derives results.json again
    assert "results.json was damaged" in capsys.readouterr().err
    assert read_results(out).results["rolebench_zh_specific"].value(field) != bad


NAN, INF = float("nan"), float("inf")
SPE = ("floors", "baseline:question", "rolellm", "spe")


@pytest.mark.parametrize(
    ("path", "bad", "message"),
    [
        (SPE, NAN, "must be a number in [0, 1] or null, not nan"),
        (SPE, INF, "not inf"),
        (SPE, -INF, "not -inf"),
        (SPE, 1.5, "not 1.5"),
        (SPE, 10**309, "not 1000000000"),
        (("floors", "baseline:oracle"), {"rolellm": {"spe": 0.99}}, "unknown floor 'baseline:oracle'"),
        (("flags",), ["looping"] * 100_000, "flags must be at most 16 distinct names, not 100,000 entries"),
        (("flags",), ["x" * 5000], "a flag is a short lower-case name"),
        (("verbatim", "share"), NAN, "verbatim.share"),
        (("unseen",), {"n": 3, "spe": 7.0, "spe_n": 3}, "unseen spe must be a number in [0, 1]"),
    ],
    ids=["nan", "inf", "-inf", "over-1", "309-digits", "unknown-floor", "100k-flags", "long-flag",
         "verbatim-nan", "unseen-out-of-range"],
)  # fmt: skip
def test_floors_and_flags_read_back_are_checked(path, bad, message, tmp_path, capsys):
    """A results.json whose floors or flags were altered is refused in one line naming the file where it is
    read as given (`leaderboard build`), and derived again from the run folder by `report` and `score`."""
    out = tmp_path / "run"
    run("baseline:rolegpt", ("rolebench_demo_specific",), out)
    results_file = out / "results.json"
    document = json.loads(results_file.read_text(encoding="utf-8"))
    target = document["results"]["rolebench_demo_specific"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = bad
    results_file.write_text(json.dumps(document), encoding="utf-8")
    board = ["leaderboard", "build", str(out), "--out", str(tmp_path / "board")]
    assert main(board) == 2  # a results file read as given: refused
    err = capsys.readouterr().err
    assert message in err and str(results_file) in err and err.count("\n") == 1, err[:300]
    assert "results.rolebench_demo_specific" in err and len(err) < 600
    assert main(["report", str(out)]) == 0  # a command on the run folder derives results.json again
    assert "results.json was damaged" in capsys.readouterr().err
    assert main(["score", str(out), "--protocol", "rolebench"]) == 0
    task = read_results(out).results["rolebench_demo_specific"]
    assert set(task.value("floors")) == {"baseline:question", "baseline:description"}  # no train file
    assert task.value("flags") == [] and 0 <= task.value("floors")["baseline:question"]["rolellm"]["spe"] <= 1
    assert main(board) == 0
