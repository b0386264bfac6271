"""`rolebench judge`: win rate against the RoleGPT baseline, with the real `openai:` adapter talking
to the local fake OpenAI-compatible server, whose verdicts each test decides by reading the prompt
(which answer is shown as model_a and which as model_b)."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import rolebench
from rolebench.cli.main import main
from rolebench.judging import parse as judge_parse
from rolebench.judging.config import load_judge_config
from rolebench.run.folder import read_results
from tests import run_folders
from tests.fake_openai import Reply, fake_openai  # noqa: F401 - `fake_openai` is a fixture

GOOD = "Arr, GOOD answer"  # the marker our fake judge prefers
FIELDS = (
    "win_rate",
    "win_rate_ci",
    "wins",
    "ties",
    "losses",
    "judged",
    "position_consistency",
    "parse_failures",
    "avg_len_model",
    "avg_len_baseline",
    "n_no_baseline",
)
FAST = {"backoff": 0.0, "max_retries": 0}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own judgment cache (never the user's)."""
    monkeypatch.setenv("ROLEBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def sample(i: int, output: str | None, baseline: str | None, language: str = "en") -> dict[str, Any]:
    zh = language == "zh"
    role, question = ("孙悟空", f"第{i}个问题？") if zh else ("Captain Mira Vance", f"Question {i}?")
    return {
        "id": f"demo/{i}",
        "index": i,
        "role": role,
        "question": question,
        "description": "A captain.",
        "language": language,
        "output": output,
        "baseline": baseline,
        "scores": {},
        "messages": [],
        "references": ["a reference"],
    }


def make_run(tmp_path: Path, tasks: dict[str, list[dict[str, Any]]]) -> Path:
    """A run folder as `rolebench evaluate` writes it (one group `all` of every task)."""
    return run_folders.make_run(tmp_path / "run", "baseline:rolegpt", tasks)


def shown(body: dict[str, Any]) -> dict[str, str]:
    """The answers the judge was shown, by anonymous name, read back from the prompt."""
    user = body["messages"][-1]["content"]
    start = user.index('[\n  {\n    "model": "model_a"')
    entries, _ = json.JSONDecoder().raw_decode(user, start)
    return {e["model"]: e["answer"] for e in entries}


def ranking(best: str) -> str:
    """A Python-literal ranking (as the paper's prompt asks) with `best` ranked 1."""
    other = "model_b" if best == "model_a" else "model_a"
    return repr(
        [
            {"model": best, "reason": "more in character", "rank": 1},
            {"model": other, "reason": "flat", "rank": 2},
        ]
    )


def prefers_good(body: dict[str, Any]) -> str:
    answers = shown(body)
    return ranking("model_a" if answers["model_a"].startswith(GOOD) else "model_b")


def run_judge(run: Path, server: Any, model: str = "fake-model", **settings: Any) -> dict[str, Any]:
    """`rolebench.judging` with the fake server; the judging's block (`config.judge`) and the group fields."""
    settings.setdefault("concurrency", 4)
    results = rolebench.judge(
        run, f"openai:{model}", base_url=server.base_url, progress=False, judge_args=FAST, **settings
    )
    return {"judge": results.config.judge, "groups": {n: g.model_dump() for n, g in results.groups.items()}}


def lines_of(run: Path, task: str) -> list[dict[str, Any]]:
    return run_folders.judgment_lines(run, task, read_results(run).config.judge or {})


def task_fields(run: Path, task: str = "t") -> dict[str, Any]:
    return read_results(run).results[task].model_dump()


def test_better_answer_wins_in_both_orders(tmp_path, fake_openai):
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(5)]})
    server = fake_openai(lambda body: Reply(text=prefers_good(body), delay=0.05))
    run_judge(run, server, concurrency=4)
    assert server.max_in_flight == 4  # requests go through the adapter's concurrency
    fields = task_fields(run)
    assert set(FIELDS) <= set(fields)
    assert (fields["wins"], fields["ties"], fields["losses"], fields["judged"]) == (5, 0, 0, 5)
    assert fields["win_rate"] == 1.0 and fields["position_consistency"] == 1.0
    assert fields["avg_len_model"] == pytest.approx(sum(len(f"{GOOD} {i}") for i in range(5)) / 5)
    assert fields["avg_len_baseline"] == pytest.approx(7.0)
    group = read_results(run).groups["all"].model_dump()
    assert {k: group[k] for k in FIELDS} == {k: fields[k] for k in FIELDS}  # a one-task group
    assert server.count() == 10
    prompts = [r.body for r in server.received if r.body]
    orders = {
        (shown(b)["model_a"].startswith(GOOD), b["messages"][-1]["content"].split("?")[0]) for b in prompts
    }
    assert len(orders) == 10  # every pair was shown both ways round
    assert all("baseline" not in json.dumps(b["messages"]).lower() for b in prompts)  # anonymised
    assert all(b["temperature"] == 0.0 and b["seed"] == 0 for b in prompts)


def test_position_biased_judge_yields_ties_not_wins(tmp_path, fake_openai):
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(4)]})
    run_judge(run, fake_openai(lambda body: ranking("model_a")))
    fields = task_fields(run)
    assert (fields["wins"], fields["ties"], fields["losses"]) == (0, 4, 0)
    assert fields["win_rate"] == 0.5 and fields["position_consistency"] == 0.0


def test_results_json_tasks_groups_and_config(tmp_path, fake_openai):
    en = [
        sample(i, f"{GOOD} {i}" if i % 2 else f"weak {i}", f"{GOOD} base {i}" if i % 2 == 0 else f"b{i}")
        for i in range(6)
    ]
    zh = [sample(i, f"{GOOD}，俺老孙{i}", f"普通{i}", "zh") for i in range(3)]
    zh.append(sample(3, "有回答", None, "zh"))
    run = make_run(tmp_path, {"t": en, "t_zh": zh})
    server = fake_openai(prefers_good)
    report = run_judge(run, server)
    results = read_results(run)
    assert (results.results["t"].wins, results.results["t"].losses) == (3, 3)
    assert results.results["t"].win_rate == 0.5
    assert results.results["t_zh"].n_no_baseline == 1 and results.results["t_zh"].judged == 3
    group = results.groups["all"].model_dump()
    assert (group["wins"], group["losses"], group["judged"], group["n_no_baseline"]) == (6, 3, 9, 1)
    assert group["win_rate"] == pytest.approx(6 / 9)
    low, high = group["win_rate_ci"]
    assert low <= group["win_rate"] <= high
    assert report["groups"]["all"]["win_rate_ci"] == group["win_rate_ci"]  # seeded bootstrap
    judge = results.config.judge
    assert judge["spec"] == "openai:fake-model" and judge["info"]["name"] == "fake-model"
    assert judge["template_hash"] == load_judge_config().template_hash()
    assert "both orders" in judge["protocol"] and judge["generation"]["temperature"] == 0.0
    assert judge["usage"]["requests"] == 18 and judge["usage"]["prompt_tokens"] > 0
    zh_prompts = [r.body for r in server.received if "孙悟空" in r.body["messages"][-1]["content"]]
    assert len(zh_prompts) == 6 and all(
        "下列模型要扮演的角色是“孙悟空”" in b["messages"][-1]["content"] for b in zh_prompts
    )
    lines = lines_of(run, "t_zh")
    assert [x["status"] for x in lines] == ["judged", "judged", "judged", "no_baseline"]
    assert set(lines[0]["orders"]) == {"model_first", "baseline_first"}
    assert ast.literal_eval(lines[0]["orders"]["model_first"]["raw"][0])[0]["rank"] == 1


def test_malformed_verdicts_are_retried_then_counted(tmp_path, fake_openai):
    """Sample 0 is unparsable at temperature 0 but fine when re-sampled; sample 1 never parses."""

    def handler(body: dict[str, Any]) -> str:
        answers = shown(body)
        if "never" in answers["model_a"] + answers["model_b"]:
            return "I think model A is better, honestly."
        if body["temperature"] == 0.0 and "flaky" in answers["model_a"] + answers["model_b"]:
            return "[{'model': 'model_a', 'rank': 1}, {'model': 'model_a', 'rank': 2}]"
        return prefers_good(body)

    run = make_run(
        tmp_path,
        {
            "t": [
                sample(0, f"{GOOD} flaky", "b0"),
                sample(1, f"{GOOD} never", "b1"),
                sample(2, f"{GOOD} 2", "b2"),
            ]
        },
    )
    server = fake_openai(handler)
    report = run_judge(run, server)
    fields = task_fields(run)
    assert (fields["judged"], fields["wins"], fields["parse_failures"]) == (2, 2, 1)
    # 6 first attempts, 2 retries for the flaky pair, 2 x 2 retries for the hopeless one
    assert server.count() == 12 and report["judge"]["this_run"]["retries"] == 6
    retries = [r.body for r in server.received if r.body["seed"] != 0]
    assert {b["seed"] for b in retries} == {1, 2} and all(b["temperature"] == 0.7 for b in retries)
    line = lines_of(run, "t")[1]
    assert line["status"] == "parse_failure" and line["outcome"] is None
    assert line["orders"]["model_first"]["attempts"] == 3 and len(line["orders"]["model_first"]["raw"]) == 3
    assert "no list" in line["orders"]["model_first"]["parse_errors"][0]


def test_second_run_makes_no_requests_and_another_judge_does(tmp_path, fake_openai):
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(3)]})
    server = fake_openai(prefers_good, models=None)
    first = run_judge(run, server)
    before = read_results(run).results["t"].model_dump()
    again = run_judge(run, server)
    assert server.count() == 6 and again["judge"]["this_run"]["requests"] == 0
    assert first["judge"]["judge_loaded"] and not again["judge"]["judge_loaded"]  # no model loaded at all
    assert {k: before[k] for k in FIELDS} == {k: task_fields(run)[k] for k in FIELDS}
    other = run_judge(run, server, model="judge-2")
    assert server.count() == 12 and other["judge"]["this_run"]["requests"] == 6
    assert {r.body["model"] for r in server.received[6:]} == {"judge-2"}


def test_interrupted_judging_resumes(tmp_path, fake_openai):
    """Failures (here HTTP 500s, retries off) are not stored; the next run asks only for those."""
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(4)]})
    failing = {"on": True}

    def handler(body: dict[str, Any]) -> Reply | str:
        if failing["on"] and " 3" in shown(body)["model_a"] + shown(body)["model_b"]:
            return Reply.error(500)
        return prefers_good(body)

    server = fake_openai(handler)
    run_judge(run, server)
    assert task_fields(run)["judge_errors"] == 1 and task_fields(run)["judged"] == 3
    failing["on"] = False
    report = run_judge(run, server)
    assert report["judge"]["this_run"]["requests"] == 2 and task_fields(run)["judged"] == 4


def test_reparse_fixes_verdicts_without_new_calls(tmp_path, fake_openai, monkeypatch):
    """A (simulated) buggy JSON-only parser fails on the Python-literal verdicts; after the fix,
    `--reparse` re-reads the stored raw completions and makes no request."""
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(3)]})
    server = fake_openai(prefers_good)
    fixed = judge_parse.PARSERS["rank_list"]

    def json_only(text: str, labels: Any) -> Any:
        try:
            json.loads(text)
        except ValueError:
            raise judge_parse.VerdictParseError("not JSON") from None
        return fixed(text, labels)

    monkeypatch.setitem(judge_parse.PARSERS, "rank_list", json_only)
    run_judge(run, server)
    assert task_fields(run)["parse_failures"] == 3 and server.count() == 18  # 6 x (1 + 2 retries)
    monkeypatch.setitem(judge_parse.PARSERS, "rank_list", fixed)
    run_judge(run, server)  # stored verdicts are kept as they were without --reparse
    assert task_fields(run)["parse_failures"] == 3
    report = run_judge(run, server, reparse=True)
    assert task_fields(run)["wins"] == 3 and server.count() == 18
    assert report["judge"]["this_run"]["reparsed"] == 6  # the first attempts now parse; retries unused


def test_judge_limit_is_a_seeded_nested_sample(tmp_path, fake_openai):
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(8)]})
    server = fake_openai(prefers_good)

    def chosen(limit: int, seed: int = 0) -> set[str]:
        run_judge(run, server, judge_limit=limit, seed=seed)
        lines = lines_of(run, "t")
        return {x["id"] for x in lines if x["status"] == "judged"}

    three = chosen(3)
    assert len(three) == 3 and task_fields(run)["n_not_sampled"] == 5 and task_fields(run)["judged"] == 3
    assert chosen(3) == three and three < chosen(5)  # a larger sample keeps the smaller one
    assert server.count() == 10  # the 5 of the second sample include the 3 already judged
    assert read_results(run).config.judge["limit"] == 5


def test_price_table_gives_cost(tmp_path, fake_openai):
    run = make_run(tmp_path, {"t": [sample(0, f"{GOOD} 0", "plain")]})
    table = tmp_path / "prices.yaml"
    table.write_text("fake-model: {input: 2.0, output: 10.0}\n")
    server = fake_openai(lambda body: Reply(text=prefers_good(body), usage=(1000, 100)))
    report = run_judge(run, server, price_table=table)
    expected = 2 * (1000 * 2.0 + 100 * 10.0) / 1e6
    assert report["judge"]["cost_usd"] == pytest.approx(expected)
    assert read_results(run).config.judge["usage"] == {
        "requests": 2,
        "prompt_tokens": 2000,
        "completion_tokens": 200,
    }
    again = run_judge(run, server, price_table=table)
    assert again["judge"]["cost_usd"] == pytest.approx(expected)  # what the numbers cost, cached or not
    assert again["judge"]["this_run"]["cost_usd"] == 0


def test_evaluate_judges_then_the_judge_command_rejudges_for_free(tmp_path, fake_openai, capsys):
    run = tmp_path / "rolegpt"
    server = fake_openai(lambda body: ranking("model_b"))  # identical answers; a judge that picks b: ties
    assert (
        main(
            [
                "evaluate",
                "--model",
                "baseline:rolegpt",
                "--tasks",
                "rolebench_demo",
                "--output",
                str(run),
                "--no-progress",
                "--judge",
                "openai:fake-model",
                "--judge-base-url",
                server.base_url,
                "--judge-limit",
                "4",
            ]
        )
        == 0
    )
    results = read_results(run)
    for task in results.results.values():
        assert task.judged == 4 and task.ties == 4 and task.win_rate == 0.5
    assert results.groups["rolebench_demo"].judged == 8
    # the baseline "model" answers exactly the baseline: both orders are one prompt, asked once
    assert server.count() == 8 and results.config.judge["this_run"]["requests"] == 8
    capsys.readouterr()
    assert (
        main(
            [
                "judge",
                str(run),
                "--judge",
                "openai:fake-model",
                "--base-url",
                server.base_url,
                "--no-progress",
                "--judge-limit",
                "4",
            ]
        )
        == 0
    )
    assert "judge openai:fake-model: 0 new requests" in capsys.readouterr().out and server.count() == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "nope:x"], "unknown model scheme 'nope' in 'nope:x' (--judge)"),
        (
            ["--judge", "openai:fake-model", "--judge-limit", "0"],
            "--judge-limit 0 must be at least 1",
        ),
        (["--judge", "openai:fake-model", "--judge-config", "missing"], "unknown judge 'missing'"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, args: list[str], message: str):
    run = make_run(tmp_path, {"t": [sample(0, "a", "b")]})
    assert main(["judge", str(run), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_when_every_judgment_fails_the_summary_says_what_failed_and_why(tmp_path, fake_openai, capsys):
    """No table of '-' and no request counts behind numbers that do not exist: the failure and its reason."""
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(2)]})
    server = fake_openai(lambda body: "I think model A is better, honestly.")
    args = ["judge", str(run), "--judge", "openai:fake-model", "--base-url", server.base_url, "--no-progress"]
    assert main(args) == 1
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    assert "no win rate: 2 of 2 pairs got no verdict: 2 unparsable verdicts after 3 attempts each" in out
    assert "the judge wrote 'I think model A is better, honestly.'" in out
    assert "completions behind these numbers" not in out and "| win rate" not in out
    assert "2 verdicts could not be parsed after every attempt" in err and "--reparse" in err
    assert "run the same command again" not in err  # the unparsable completions are stored: it would not help
    # a server that refuses every request: the reason is the server's
    refused = make_run(tmp_path / "refused", {"t": [sample(0, "another answer", "plain 0")]})
    server = fake_openai(lambda body: Reply.error(400), models=None)
    args = ["judge", str(refused), "--judge", "openai:fake-model", "--base-url", server.base_url]
    assert main([*args, "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "no win rate: 1 of 1 pairs got no verdict: 1 judge error (first: " in out and "400" in out


def test_two_judges_of_one_run_are_both_kept_with_their_agreement(tmp_path, fake_openai):
    """A run judged by two judges keeps both (`judges`), and says how far they agree on the same pairs:
    the share of equal outcomes, Cohen's kappa, and each judge's own position consistency."""
    rows = [
        sample(i, f"{GOOD} {i}" if i % 2 else f"weak {i}", f"plain {i}" if i % 2 else f"{GOOD} base {i}")
        for i in range(8)
    ]
    run = make_run(tmp_path, {"t": rows})
    fair = fake_openai(prefers_good, models=None)  # wins on the GOOD items, losses elsewhere: consistent
    biased = fake_openai(lambda body: ranking("model_a"), models=None)  # prefers what is shown first: ties
    run_judge(run, fair, model="fair")
    run_judge(run, biased, model="biased")
    results = read_results(run)
    t = results.results["t"]
    judges = t.value("judges")
    assert set(judges) == {"openai:fair", "openai:biased"}
    assert (judges["openai:fair"]["wins"], judges["openai:fair"]["losses"]) == (4, 4)
    assert judges["openai:biased"]["ties"] == 8 and t.value("win_rate") == 0.5  # the last one run shown
    [(label, agreement)] = t.value("judge_agreement").items()
    assert label == "openai:biased vs openai:fair"
    assert agreement["n"] == 8 and agreement["agreement"] == 0.0  # ties against wins and losses: never equal
    assert agreement["kappa"] == pytest.approx(0.0)  # the biased judge's outcomes carry no information
    assert agreement["position_consistency"] == {"openai:biased": 0.0, "openai:fair": 1.0}
    assert results.groups["all"].value("judge_agreement")[label]["n"] == 8
    assert set(results.config.judges or {}) == {"openai:fair", "openai:biased"}
    run_judge(run, fake_openai(prefers_good, models=None), model="fair2")
    again = read_results(run).results["t"].value("judge_agreement")["openai:fair vs openai:fair2"]
    assert again["agreement"] == 1.0 and again["kappa"] == pytest.approx(1.0)
    from rolebench.report.page import render_report
    from rolebench.report.summary import summary_text

    assert "Judge agreement" in render_report(run) and "openai:fair vs openai:fair2" in render_report(run)
    assert "judges openai:fair vs openai:fair2: 100% of 8 pairs agree (kappa 1.00)" in summary_text(
        read_results(run)
    )


def test_a_rejudge_pass_that_gives_no_verdict_says_so_and_exits_1(tmp_path, fake_openai, capsys, monkeypatch):
    """A pass whose verdicts all fail to parse keeps the earlier verdicts (a pass never makes a result
    worse), but it never exits 0 nor passes those numbers off as its own."""
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(3)]})
    server = fake_openai(prefers_good)
    args = ["judge", str(run), "--judge", "openai:fake-model", "--base-url", server.base_url, "--no-progress"]
    assert main(args) == 0
    assert "6 completions behind these numbers" in capsys.readouterr().out

    def unparsable(text: str, labels: Any) -> Any:
        raise judge_parse.VerdictParseError("a parser that reads nothing")

    monkeypatch.setitem(judge_parse.PARSERS, "rank_list", unparsable)
    assert main([*args, "--reparse"]) == 1
    out, err = capsys.readouterr()
    assert "completions behind these numbers" not in out and "3 verdicts kept from earlier passes" in out
    assert "this judge pass gave no verdict: 3 of 3 pairs got no verdict: 3 unparsable verdicts" in err
    assert "keep 3 verdicts of earlier passes" in err
    assert task_fields(run)["wins"] == 3  # the earlier verdicts stand
    outcome = read_results(run).config.judge["pass"]
    assert (outcome["verdicts"], outcome["no_verdict"], outcome["kept"]) == (0, 3, 3)


def _judgments_file(run: Path) -> Path:
    from rolebench.judging.sets import set_of
    from rolebench.run.folder import RunFolder

    return set_of(RunFolder(run), read_results(run).config.judge or {}).folder / "t.jsonl"


def _edit(path: Path, change: Any) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(x) + "\n" for x in change(lines)), encoding="utf-8")


def _flip(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**lines[0], "outcome": "loss"}, *lines[1:]]


@pytest.mark.parametrize(
    ("damage", "legacy", "named"),
    [
        (_flip, False, "judgments file changed since the judge wrote it"),
        (lambda lines: lines + lines, False, "judgments file changed since the judge wrote it"),
        (lambda lines: lines + lines, True, "pair demo/0 is judged twice"),
        (lambda lines: [{**lines[0], "outcome": "crushing win"}, *lines[1:]], True, "outcome"),
        (lambda lines: [{**lines[0], "consistent": "yes"}, *lines[1:]], True, "consistent"),
        (lambda lines: [{**lines[0], "status": "won"}, *lines[1:]], True, "status"),
        (
            lambda lines: [{**lines[0], "outcome": None}, *lines[1:]],
            True,
            "status 'judged' with outcome None",
        ),
        (lambda lines: [{**lines[0], "len_model": -3}, *lines[1:]], True, "len_model"),
        (lambda lines: [{**lines[0], "orders": "both"}, *lines[1:]], True, "orders"),
    ],
)
def test_a_hand_edited_judgments_file_is_named_and_never_counted(
    damage, legacy, named, tmp_path, fake_openai, capsys
):
    """Judgment files are checked as samples files are: the digest the judge recorded (`legacy`: a judge.json
    of an older rolebench, without one: the values alone), one verdict per pair, known values. What fails is
    named and left out of the results; judging again writes the file anew from the cache (no judge call)."""
    run = make_run(tmp_path, {"t": [sample(i, f"{GOOD} {i}", f"plain {i}") for i in range(3)]})
    server = fake_openai(prefers_good)
    run_judge(run, server)
    assert task_fields(run)["wins"] == 3
    path = _judgments_file(run)
    if legacy:
        meta_path = path.parent / "judge.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta.pop("sha256")
        meta_path.write_text(json.dumps(meta), encoding="utf-8")
    _edit(path, damage)
    capsys.readouterr()
    assert main(["score", str(run)]) == 0
    err = capsys.readouterr().err
    assert "judgments left out of the results" in err and named in err and str(path) in err, err
    assert "internal error" not in err and task_fields(run).get("win_rate") is None  # never a flipped 0.0
    assert main(["report", str(run)]) == 0 and "internal error" not in capsys.readouterr().err
    calls = server.count()
    run_judge(run, server)
    assert task_fields(run)["wins"] == 3 and task_fields(run)["judged"] == 3 and server.count() == calls
    assert "judgments replaced by this pass's" in capsys.readouterr().err
