"""`rolebench compare RUN_A RUN_B`: paired differences on the items both runs hold, on real runs (the
packaged demo, and the real RoleBench files when present), a run against itself, runs that cannot be
compared, the judge's win rates, and the statistics on an input small enough to compute by hand."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rolebench
from rolebench.cli.main import main
from rolebench.run.folder import read_results, read_samples, write_results, write_samples
from rolebench.scoring.permutation import paired_differences
from rolebench.scoring.resampling import Layout, Resampling
from tests.fake_openai import fake_openai  # noqa: F401 - `fake_openai` is a fixture

NAN = np.nan


def evaluate(out: Path, model: str, tasks: str, *extra: str) -> Path:
    assert (
        main(["evaluate", "--model", model, "--tasks", tasks, "--output", str(out), "--no-progress", *extra])
        == 0
    )
    return out


def compare(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["compare", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real runs on the packaged demo: the released RoleGPT answers, and the question as the answer."""
    root = tmp_path_factory.mktemp("demo")
    evaluate(root / "rolegpt", "baseline:rolegpt", "rolebench_demo")
    evaluate(root / "question", "baseline:question", "rolebench_demo")
    return root


# ---- the statistics, by hand -------------------------------------------------------------------------


def test_a_tiny_input_gives_the_numbers_computed_by_hand():
    """Two general items (CUS; RAW where both have one) and one role-specific item, in one group."""
    tasks = {
        "general": (
            np.array([[1.0, 0.5], [0.5, NAN]]),  # A: CUS, RAW per item
            np.array([[0.5, 0.0], [0.5, 0.25]]),  # B
            ("p:cus", "p:raw"),
        ),
        "specific": (np.array([[0.3]]), np.array([[0.1]]), ("p:spe",)),
    }
    layout = Layout({"all": ["general", "specific"]}, derived={"p:avg": ["p:cus", "p:raw", "p:spe"]})
    found = paired_differences(tasks, layout, Resampling(resamples=2000, seed=3))
    cus, raw, spe = found["general"]["p:cus"], found["general"]["p:raw"], found["specific"]["p:spe"]
    assert (cus.a, cus.b, cus.diff, cus.n) == (0.75, 0.5, 0.25, 2)
    # the item-differences are .5 and 0: every resample's mean is 0, .25 or .5, each 0 with chance 1/4
    assert cus.ci == (0.0, 0.5)
    assert cus.p == 1.0  # flipping either difference leaves |mean| at .25
    assert (raw.a, raw.b, raw.diff, raw.n) == (0.5, 0.0, 0.5, 1)  # RAW: only the item both have
    assert spe.diff == pytest.approx(0.2) and spe.ci == pytest.approx((0.2, 0.2)) and spe.p == 1.0
    avg = found["all"]["p:avg"]
    assert avg.a == pytest.approx((0.75 + 0.5 + 0.3) / 3) and avg.b == pytest.approx((0.5 + 0.0 + 0.1) / 3)
    assert avg.diff == pytest.approx((0.25 + 0.5 + 0.2) / 3) and avg.n == 3
    assert avg.ci is not None and avg.ci[0] <= avg.diff <= avg.ci[1]
    # each resample recomputes the avg from what it drew: CUS 0, .25 or .5; RAW .5, or none when only the
    # second item was drawn (the avg is then the mean of CUS and SPE); SPE .2
    assert avg.ci[0] >= (0 + 0.2) / 2 - 1e-12 and avg.ci[1] <= (0.5 + 0.5 + 0.2) / 3 + 1e-12


def test_the_same_seed_gives_the_same_numbers_and_another_seed_other_intervals():
    rng = np.random.default_rng(0)
    a, b = rng.random((300, 1)), rng.random((300, 1))
    tasks = {"t": (a, b, ("p:spe",))}
    first = paired_differences(tasks, Layout(), Resampling(seed=1))["t"]["p:spe"]
    assert paired_differences(tasks, Layout(), Resampling(seed=1))["t"]["p:spe"] == first
    other = paired_differences(tasks, Layout(), Resampling(seed=2))["t"]["p:spe"]
    assert other.diff == first.diff and other.ci != first.ci


# ---- real runs ---------------------------------------------------------------------------------------


def test_rolegpt_against_the_question_floor_on_the_demo(demo, tmp_path, capsys):
    out = tmp_path / "compare.json"
    code, printed, _ = compare(capsys, demo / "rolegpt", demo / "question", "--json", out)
    assert code == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    a, b = read_results(demo / "rolegpt"), read_results(demo / "question")
    group = document["groups"]["rolebench_demo"]
    # every item RoleGPT answered is one the question answers too: A's means are its own results
    assert group["avg"]["a"] == pytest.approx(a.groups["rolebench_demo"].avg)
    assert group["rolebench"]["avg"]["a"] == pytest.approx(
        a.groups["rolebench_demo"].value("rolebench")["avg"]
    )
    assert document["tasks"]["rolebench_demo_specific"]["spe"]["b"] == pytest.approx(
        b.results["rolebench_demo_specific"].value("spe")
    )
    for entry in [*document["tasks"].values(), group]:
        for metric, found in entry.items():
            if isinstance(found, dict) and "diff" in found:
                assert set(found) == {"a", "b", "diff", "ci", "p", "n", "exact", "verdict"}, metric
                assert found["diff"] == pytest.approx(found["a"] - found["b"])
                assert found["ci"][0] <= found["diff"] <= found["ci"][1]
    samples = read_samples(demo / "rolegpt", "rolebench_demo_general")
    answered = sum(1 for s in samples if s.output is not None)
    assert document["tasks"]["rolebench_demo_general"]["cus"]["n"] == answered
    assert group["avg"]["ci"][0] > 0 and group["avg"]["p"] < 0.01  # RoleGPT is above the question
    assert document["bootstrap"] == {"resamples": 1000, "confidence": 0.95, "seed": 0}
    assert group["avg"]["verdict"] == "A higher" and not group["avg"]["exact"]  # 27 items: Monte Carlo
    row = next(line for line in printed.splitlines() if "avg recall" in line)
    assert "A higher" in row and f"{group['avg']['diff']:+.4f}" in row


def test_a_run_against_itself_differs_by_nothing(demo, capsys, tmp_path):
    out = tmp_path / "self.json"
    code, printed, _ = compare(capsys, demo / "rolegpt", demo / "rolegpt", "--json", out)
    assert code == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    entries = [*document["tasks"].values(), *document["groups"].values()]
    found = [
        v
        for e in entries
        for block in (e, e["rolebench"])
        for v in block.values()
        if isinstance(v, dict) and "p" in v
    ]
    assert found and all(f["diff"] == 0 and f["ci"] == [0, 0] and f["p"] == 1 for f in found)
    assert "no difference" in printed and "A higher" not in printed
    assert all(f["verdict"] == "no difference" for f in found)


def test_bootstrap_flag_and_seed(demo, capsys, tmp_path):
    out = tmp_path / "few.json"
    assert (
        compare(
            capsys, demo / "rolegpt", demo / "question", "--bootstrap", "50", "--seed", "7", "--json", out
        )[0]
        == 0
    )
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["bootstrap"]["resamples"] == 50 and document["bootstrap"]["seed"] == 7
    assert document["groups"]["rolebench_demo"]["avg"]["p"] >= 1 / 51


def test_runs_that_cannot_be_compared_are_refused_in_one_line(demo, tmp_path, capsys):
    general = evaluate(tmp_path / "general", "baseline:rolegpt", "rolebench_demo_general")
    specific = evaluate(tmp_path / "specific", "baseline:rolegpt", "rolebench_demo_specific")
    code, _, err = compare(capsys, general, specific)
    assert code == 2 and "no task in common" in err and len(err.strip().splitlines()) == 1

    protocol = evaluate(tmp_path / "f", "baseline:question", "rolebench_demo", "--protocol", "rolebench")
    code, _, err = compare(capsys, demo / "rolegpt", protocol)
    assert code == 2 and "different headline protocols (rolellm in A, rolebench in B)" in err

    other_data = shutil.copytree(demo / "question", tmp_path / "other-data")
    results = read_results(other_data)
    files = (
        results.config.data["builtin"]["files"]
        if "builtin" in results.config.data
        else results.config.data["files"]
    )
    files["rolebench-demo/general/test.jsonl"] = "0" * 64  # another release of the test file
    write_results(other_data, results)
    code, _, err = compare(capsys, demo / "rolegpt", other_data)
    assert code == 2 and "different data for rolebench_demo_general: data files" in err

    disjoint = shutil.copytree(demo / "question", tmp_path / "disjoint")
    results = read_results(disjoint)
    for task in results.results:  # the same tasks, other items
        records = [r.model_copy(update={"id": f"other/{r.id}"}) for r in read_samples(disjoint, task)]
        results.results[task].samples_sha256 = write_samples(disjoint, task, records)
    write_results(disjoint, results)
    code, _, err = compare(capsys, demo / "rolegpt", disjoint)
    assert code == 2 and "share no item" in err and len(err.strip().splitlines()) == 1

    code, _, err = compare(capsys, demo / "rolegpt", demo / "question", "--bootstrap", "-1")
    assert code == 2 and "--bootstrap" in err


def test_a_samples_file_out_of_step_with_results_is_refused(demo, tmp_path, capsys):
    broken = shutil.copytree(demo / "question", tmp_path / "broken")
    path = broken / "samples" / "rolebench_demo_general.jsonl"
    path.write_text("\n".join(path.read_text(encoding="utf-8").splitlines()[:-2]) + "\n", encoding="utf-8")
    code, _, err = compare(capsys, demo / "rolegpt", broken)
    assert code == 2 and "rolebench score" in err and "rolebench_demo_general" in err


# ---- the judge's win rates ---------------------------------------------------------------------------


def _longer_wins(body: dict[str, Any]) -> str:
    """A judge that prefers the longer answer, and ranks the first shown first on equal ones."""
    user = body["messages"][-1]["content"]
    start = user.index('[\n  {\n    "model": "model_a"')
    entries, _ = json.JSONDecoder().raw_decode(user, start)
    answers = {e["model"]: e["answer"] for e in entries}
    best = "model_b" if len(answers["model_b"]) > len(answers["model_a"]) else "model_a"
    other = "model_a" if best == "model_b" else "model_b"
    return repr([{"model": best, "reason": "r", "rank": 1}, {"model": other, "reason": "r", "rank": 2}])


def test_win_rates_compared_when_one_judge_judged_both(demo, tmp_path, capsys, fake_openai, monkeypatch):
    monkeypatch.setenv("ROLEBENCH_CACHE", str(tmp_path / "cache"))
    server = fake_openai(_longer_wins, models=("fake-model", "another-model"))
    runs = [shutil.copytree(demo / name, tmp_path / name) for name in ("rolegpt", "question")]
    settings = {"base_url": server.base_url, "progress": False, "judge_args": {"max_retries": 0}}
    for run in runs:
        rolebench.judge(run, "openai:fake-model", **settings)
    out = tmp_path / "judged.json"
    code, printed, _ = compare(capsys, *runs, "--json", out)
    assert code == 0
    win = json.loads(out.read_text(encoding="utf-8"))["groups"]["rolebench_demo"]["win_rate"]
    judged = [read_results(run).groups["rolebench_demo"] for run in runs]
    # RoleGPT's answers are the baseline's own: each pair is a tie (.5); the question is mostly shorter
    assert win["a"] == 0.5 and win["b"] == judged[1].value("win_rate") < 0.25
    assert win["n"] == judged[0].value("judged") == judged[1].value("judged")
    assert win["diff"] == pytest.approx(0.5 - win["b"]) and win["ci"][0] <= win["diff"] <= win["ci"][1]
    assert win["ci"][0] > 0 and win["p"] < 0.01
    assert "win rate" in printed and "judge openai:fake-model" in printed

    other = shutil.copytree(demo / "question", tmp_path / "other-judge")
    rolebench.judge(other, "openai:another-model", **settings)
    out = tmp_path / "two-judges.json"
    code, printed, _ = compare(capsys, runs[0], other, "--json", out)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and "win_rate" not in document["groups"]["rolebench_demo"] and document["judge"] is None
    assert document["judge_note"].startswith("no win rate: no judge judged both runs")
    assert document["judge_note"] in printed

    # the last judges differ, but both runs hold the verdicts of openai:fake-model: compared on it
    rolebench.judge(other, "openai:fake-model", **settings)
    rolebench.judge(other, "openai:another-model", **settings)  # the last one again
    assert read_results(other).config.judge["spec"] == "openai:another-model"
    out = tmp_path / "common-judge.json"
    code, printed, _ = compare(capsys, runs[0], other, "--json", out)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and document["judge"] == "openai:fake-model"
    assert document["groups"]["rolebench_demo"]["win_rate"] == win  # the same verdicts as `runs[1]`'s
    assert "last judges differ (openai:fake-model in A, openai:another-model in B)" in document["judge_note"]
    assert document["judge_note"] in printed

    unjudged = shutil.copytree(demo / "question", tmp_path / "unjudged")
    out = tmp_path / "one-judged.json"
    assert compare(capsys, runs[0], unjudged, "--json", out)[0] == 0
    note = json.loads(out.read_text(encoding="utf-8"))["judge_note"]
    assert note.startswith("no win rate: only A was judged (openai:fake-model)")


# ---- the real RoleBench files ------------------------------------------------------------------------


def test_rolegpt_against_the_question_on_chinese(rolebench_data, tmp_path, capsys):
    rolegpt = evaluate(
        tmp_path / "rolegpt", "baseline:rolegpt", "rolebench_zh", "--data-dir", str(rolebench_data)
    )
    question = evaluate(
        tmp_path / "q", "baseline:question", "rolebench_zh", "--data-dir", str(rolebench_data)
    )
    out = tmp_path / "zh.json"
    assert compare(capsys, rolegpt, question, "--json", out)[0] == 0
    group = json.loads(out.read_text(encoding="utf-8"))["groups"]["rolebench_zh"]
    a, b = read_results(rolegpt).groups["rolebench_zh"], read_results(question).groups["rolebench_zh"]
    assert group["cus"]["a"] == pytest.approx(a.cus) and group["cus"]["b"] == pytest.approx(b.cus)
    assert group["avg"]["diff"] == pytest.approx(a.avg - b.avg)
    assert group["cus"]["ci"][0] > 0.1  # .5707 against .4011 on 1,451 items: far apart
    # under the F-measure the question's SPE (.2237) is above RoleGPT's (.2024): B is higher
    spe = group["rolebench"]["spe"]
    assert spe["diff"] < 0 and spe["n"] == 239


# ---- thin or partial evidence (issue 32, item 2) -----------------------------------------------------


def _by_enumeration(d: np.ndarray) -> float:
    """The exact two-sided sign-flip p-value, the plain way: every sign pattern, one at a time."""
    import itertools

    observed = abs(d.mean())
    flips = [abs((d * np.array(s)).mean()) for s in itertools.product((1.0, -1.0), repeat=len(d))]
    return sum(f >= observed - 1e-12 for f in flips) / len(flips)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12])
def test_few_items_get_the_exact_permutation_p(n):
    rng = np.random.default_rng(n)
    a, b = rng.random((n, 1)), rng.random((n, 1))
    found = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), Resampling(seed=0))["t"]["p:spe"]
    assert found.exact and found.p == pytest.approx(_by_enumeration((a - b)[:, 0]))


def test_two_items_give_one_half_and_no_verdict_however_far_apart():
    """The issue's case: 1, 2 or 3 items all on A's side printed "A higher" beside p = 1, .484, .259."""
    for n, p in ((1, 1.0), (2, 0.5), (3, 0.25)):
        a, b = np.full((n, 1), 0.9) - np.arange(n)[:, None] * 0.1, np.full((n, 1), 0.1)
        found = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), Resampling(seed=0))["t"]["p:spe"]
        assert found.ci is not None and found.ci[0] > 0  # the interval alone would say "A higher"
        assert found.p == p and found.exact
        assert found.verdict.startswith(f"too few items (n = {n}")
    six = paired_differences(
        {"t": (np.linspace(0.5, 0.9, 6)[:, None], np.full((6, 1), 0.1), ("p:spe",))}, Layout(), Resampling()
    )["t"]["p:spe"]
    assert six.p == 2 / 64 and six.verdict == "A higher"  # 6 items: the least that can reach .05


def test_the_exact_p_agrees_with_scipy_and_a_group_enumerates_its_tasks_jointly():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    a, b = rng.random((10, 1)), rng.random((10, 1)) * 0.8
    found = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), Resampling())["t"]["p:spe"]
    theirs = stats.permutation_test(
        (a[:, 0], b[:, 0]),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    assert found.exact and found.p == pytest.approx(theirs.pvalue)
    # a group of two tasks (4 + 5 items): its mean of task means, flipped over all 2^9 patterns
    tasks = {"x": (a[:4], b[:4], ("p:cus",)), "y": (a[4:9], b[4:9], ("p:cus",))}
    group = paired_differences(tasks, Layout({"g": ["x", "y"]}), Resampling())["g"]["p:cus"]
    import itertools

    dx, dy = (a[:4] - b[:4])[:, 0], (a[4:9] - b[4:9])[:, 0]
    observed = abs((dx.mean() + dy.mean()) / 2)
    flips = [
        abs(((dx * s[:4]).mean() + (dy * s[4:]).mean()) / 2)
        for s in map(np.array, itertools.product((1.0, -1.0), repeat=9))
    ]
    assert group.exact and group.p == pytest.approx(sum(f >= observed - 1e-12 for f in flips) / 512)


def test_above_sixteen_items_p_is_a_monte_carlo_estimate():
    rng = np.random.default_rng(1)
    a, b = rng.random((40, 1)), rng.random((40, 1))
    found = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), Resampling(seed=0))["t"]["p:spe"]
    assert not found.exact and found.p is not None and found.p * 1001 == pytest.approx(round(found.p * 1001))


def test_the_interval_resamples_only_the_items_both_runs_share():
    """The train floor answers 7 of 239 items: the interval is a paired bootstrap of those 7 (the very
    draws of a run of the 7 alone), never of the 239, and no resample is left without them."""
    rng = np.random.default_rng(7)
    a, b = np.full((239, 1), NAN), rng.random((239, 1))
    shared = np.sort(rng.choice(239, 7, replace=False))
    a[shared, 0] = rng.random(7)
    settings = Resampling(resamples=4000, seed=2)
    partial = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), settings)["t"]["p:spe"]
    alone = paired_differences({"t": (a[shared], b[shared], ("p:spe",))}, Layout(), settings)["t"]["p:spe"]
    assert partial.n == alone.n == 7 and partial.verdict == alone.verdict and partial.p == alone.p
    assert partial.ci == pytest.approx(alone.ci, abs=1e-12) and partial.diff == pytest.approx(alone.diff)
    stats = pytest.importorskip("scipy.stats")
    d = (a[shared] - b[shared])[:, 0]
    theirs = stats.bootstrap(
        (d,), np.mean, n_resamples=20_000, method="percentile", random_state=np.random.default_rng(0)
    ).confidence_interval
    assert partial.ci is not None
    width, their_width = partial.ci[1] - partial.ci[0], theirs.high - theirs.low
    assert abs(width / their_width - 1) < 0.06  # the same bootstrap, other draws


def test_a_column_on_some_items_resamples_exactly_those():
    """`--judge-limit`: the win rate on 10 of 50 items; every resample holds exactly those 10."""
    from rolebench.scoring.resampling import TaskItems, bootstrap

    rng = np.random.default_rng(3)
    values = np.full((1, 50, 2), NAN)
    values[0, :, 0] = rng.random(50)
    values[0, :10, 1] = rng.integers(0, 2, 10)
    sums = bootstrap(TaskItems(values, ("p:cus", "judge:win_rate")), Resampling(resamples=500), "t")
    assert (sums["judge:win_rate"][1] == 10).all() and (sums["p:cus"][1] == 50).all()


def test_runs_of_two_items_get_no_verdict_on_the_demo(tmp_path, capsys):
    runs = [
        evaluate(tmp_path / m, f"baseline:{m}", "rolebench_demo", "--limit", "2")
        for m in ("rolegpt", "question")
    ]
    out = tmp_path / "two.json"
    code, printed, _ = compare(capsys, *runs, "--json", out)
    assert code == 0 and "A higher" not in printed and "B higher" not in printed
    specific = json.loads(out.read_text(encoding="utf-8"))["tasks"]["rolebench_demo_specific"]["spe"]
    assert specific["n"] == 2 and specific["exact"] and specific["p"] in (0.5, 1.0)
    assert specific["verdict"].startswith("too few items (n = 2")
    assert "too few items" in printed and "exact" in printed


def test_the_train_floor_on_its_seven_chinese_items(rolebench_data, tmp_path, capsys):
    """The train file answers 7 of the 239 Chinese role-specific items: the comparison is on those 7."""
    common = ("rolebench_zh_specific", "--data-dir", str(rolebench_data))
    train = evaluate(tmp_path / "train", "baseline:train", *common)
    question = evaluate(tmp_path / "q", "baseline:question", *common)
    out = tmp_path / "train.json"
    assert compare(capsys, train, question, "--json", out)[0] == 0
    spe = json.loads(out.read_text(encoding="utf-8"))["tasks"]["rolebench_zh_specific"]["spe"]
    assert spe["n"] == 7 and spe["exact"] and spe["diff"] > 0
    answered = [s for s in read_samples(train, "rolebench_zh_specific") if s.output is not None]
    mine = {s.id: s.protocol_scores["rolellm"]["spe"] for s in answered}
    theirs = {
        s.id: s.protocol_scores["rolellm"]["spe"] for s in read_samples(question, "rolebench_zh_specific")
    }
    d = np.array([mine[i] - theirs[i] for i in mine])
    assert spe["p"] == pytest.approx(_by_enumeration(d))


def test_too_few_resamples_for_the_level_get_no_verdict():
    a, b = np.linspace(0.5, 0.9, 40)[:, None], np.full((40, 1), 0.1)
    found = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), Resampling(resamples=10))["t"]["p:spe"]
    assert found.ci is not None and found.ci[0] > 0 and found.p == 1 / 11  # 40 items: Monte Carlo
    assert found.verdict == "too few resamples (p >= 0.0909: use --bootstrap 20 or more)"
    enough = paired_differences({"t": (a, b, ("p:spe",))}, Layout(), Resampling(resamples=20))["t"]["p:spe"]
    assert enough.verdict == "A higher"
