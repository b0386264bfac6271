"""Judge parts that need no server: the verdict parser on messy outputs, the order logic, the
prompt templates and the judge file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rolebench.errors import ConfigError
from rolebench.judging.config import load_judge_config, load_price_table, run_cost
from rolebench.judging.outcomes import combine, judge_fields, preference
from rolebench.judging.parse import VerdictParseError, get_parser, parse_rank_list
from rolebench.prompts.roleplay import TEMPLATE_DIR

A_WINS = [
    # the paper's format, as JSON and as a Python literal
    '[{"model": "model_a", "reason": "vivid", "rank": 1}, {"model": "model_b", "reason": "dull", "rank": 2}]',
    "[{'model': 'model_a', 'reason': 'vivid', 'rank': 1}, {'model': 'model_b', 'reason': 'dull', 'rank': 2}]",
    # a fenced block with chatter around it, entries in reverse order
    "Here is my ranking:\n```python\n[{'model': 'model_b', 'reason': 'dull', 'rank': 2},\n"
    " {'model': 'model_a', 'reason': 'vivid', 'rank': 1}]\n```\nLet me know if you need more.",
    # typographic quotes (as in the PDF copy of the prompt) and full-width punctuation
    "[{“model”： “model_a”， “reason”： “生动”， “rank”： 1}，"
    " {“model”： “model_b”， “reason”： “平淡”， “rank”： 2}]",
    # smart quotes inside a reason of an otherwise valid literal must not break it
    '[{"model": "model_a", "reason": "他说“俺老孙来也”", "rank": 1},'
    ' {"model": "model_b", "reason": "x", "rank": 2}]',
    # unescaped quotes in a reason: not a literal at all, read entry by entry
    '[{"model": "model_a", "reason": "says "ahoy" a lot", "rank": 1},'
    ' {"model": "model_b", "reason": "ok", "rank": 2}]',
    # ranks as strings / ordinals, names in another spelling, JSON true/false elsewhere, extra keys
    '[{"model": "Model A", "rank": "1st", "confident": true}, {"model": "model-b", "rank": "2nd"}]',
    '[{"Model": "model_a", "Rank": "1"}, {"Model": "model_b", "Rank": 2.0}]',
    # a wrapper object around the list
    '{"ranking": [{"model": "model_a", "rank": 1}, {"model": "model_b", "rank": 2}]}',
]


@pytest.mark.parametrize("text", A_WINS)
def test_messy_outputs_parse_to_the_same_verdict(text: str):
    assert parse_rank_list(text) == "a"


def test_verdicts_are_relative_to_the_labels_shown():
    text = "[{'model': 'model_a', 'rank': 2}, {'model': 'model_b', 'rank': 1}]"
    assert parse_rank_list(text) == "b"
    assert parse_rank_list("[{'model': 'model_a', 'rank': 1}, {'model': 'model_b', 'rank': 1}]") == "tie"
    assert parse_rank_list("[{'model': 'x', 'rank': 1}, {'model': 'y', 'rank': 2}]", ("y", "x")) == "b"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("Model A is clearly better.", "no list"),
        ("[{'model': 'model_a', 'rank': 1}]", "no rank for ['model_b']"),
        ("[{'model': 'model_a', 'rank': 1}, {'model': 'model_a', 'rank': 2}]", "ranked twice"),
        (
            "[{'model': 'model_a', 'rank': 1}, {'model': 'baseline', 'rank': 2}]",
            "unknown model name 'baseline'",
        ),
        ("[{'model': 'model_a', 'rank': 'best'}, {'model': 'model_b', 'rank': 'worst'}]", "not a number"),
        ("[{'model': 'model_a', 'reason': 'cut off mid-sen", "no list"),  # truncated at max tokens
        ("[{'model': 'model_a'}, {'model': 'model_b'}]", "lacks `model` or `rank`"),
    ],
)
def test_unusable_outputs_are_errors_never_guesses(text: str, why: str):
    with pytest.raises(VerdictParseError, match=re.escape(why)):
        parse_rank_list(text)


def test_parsers_are_registered_by_name():
    assert get_parser("rank_list") is parse_rank_list
    with pytest.raises(ConfigError, match="did you mean rank_list"):
        get_parser("rank_lst")


def test_both_orders_must_agree_for_a_win():
    # shown model first, the judge says "a"; shown baseline first, it says "b": both prefer the model
    assert [preference("model_first", "a"), preference("baseline_first", "b")] == ["model", "model"]
    assert combine(["model", "model"]) == "win"
    assert combine(["baseline", "baseline"]) == "loss"
    assert combine(["model", "baseline"]) == "tie"  # a position-biased judge
    assert combine(["model", "tie"]) == "tie" and combine(["tie", "tie"]) == "tie"


def test_judge_fields_count_everything():
    judged = [
        {"status": "judged", "outcome": o, "consistent": c, "len_model": 10, "len_baseline": 20}
        for o, c in [("win", True), ("win", True), ("tie", False), ("loss", True)]
    ]
    statuses = ("parse_failure", "judge_error", "no_baseline", "no_output", "not_sampled")
    others = [{"status": s} for s in statuses]
    fields = judge_fields(judged + others, {"resamples": 100, "seed": 0})
    assert (fields["win_rate"], fields["judged"], fields["position_consistency"]) == (0.625, 4, 0.75)
    assert (fields["parse_failures"], fields["judge_errors"], fields["n_no_baseline"]) == (1, 1, 1)
    assert (fields["n_no_output"], fields["n_not_sampled"]) == (1, 1)
    assert (fields["avg_len_model"], fields["avg_len_baseline"]) == (10.0, 20.0)
    assert fields["win_rate_ci"] == judge_fields(judged, {"resamples": 100, "seed": 0})["win_rate_ci"]
    empty = judge_fields([], {})
    assert empty["win_rate"] is None and empty["win_rate_ci"] is None and empty["judged"] == 0


def test_templates_normalise_the_pdf_typography_and_name_their_source():
    for name in ("judge_rank_en.j2", "judge_rank_zh.j2"):
        text = (TEMPLATE_DIR / name).read_text(encoding="utf-8")
        first, body = text.split("\n", 1)
        assert first.startswith("{#-") and "PAPER_PROMPTS.md 1.4.5" in first and first.endswith("-#}")
        assert not re.search("``|''|\u2212|\u2018|\u2019", body)
        assert '[{"model": <model-name>, "reason": <rank-reason>, "rank": <model-rank>}, ' in body
    assert not re.search("[\u201c\u201d]", (TEMPLATE_DIR / "judge_rank_en.j2").read_text(encoding="utf-8"))


def test_judge_messages_are_anonymised_and_ordered():
    judge = load_judge_config()
    messages = judge.messages(
        role="李白",
        description="诗仙。",
        question=" 你好吗？ ",
        language="zh",
        answers=("第一个回答", "第二个回答"),
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith("你是一个角色扮演的效果对比助手")
    user = messages[1]["content"]
    assert '{"question": "你好吗？"}' in user and "“李白”" in user
    shown_first = user.index('"model": "model_a",\n    "answer": "第一个回答"')
    assert shown_first < user.index('"model": "model_b",\n    "answer": "第二个回答"')
    with pytest.raises(ConfigError, match="no prompt for language 'fr'"):
        judge.messages(role="x", description="y", question="z", language="fr", answers=("a", "b"))


def test_judge_file_is_validated(tmp_path: Path):
    judge = load_judge_config("rolellm_rank")
    assert judge.both_orders and judge.generation.temperature == 0.0 and judge.max_attempts == 3
    assert judge.generation_config(2, concurrency=4).seed == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("templates: {en: judge_rank_en.j2}\nlabels: [model_a, baseline]\n")
    with pytest.raises(ConfigError, match="not 'baseline'"):
        load_judge_config(str(bad))
    bad.write_text("templates: {en: judge_rank_en.j2}\ntemprature: 0\n")
    with pytest.raises(ConfigError, match="Extra inputs are not permitted at temprature"):
        load_judge_config(str(bad))


def test_price_tables(tmp_path: Path):
    table = tmp_path / "prices.json"
    table.write_text('{"gpt-4o-mini": {"input": 0.15, "output": 0.6}, "judge": [1, 2]}')
    prices = load_price_table(table)
    assert prices == {"gpt-4o-mini": (0.15, 0.6), "judge": (1.0, 2.0)}
    usage = {"prompt_tokens": 2_000_000, "completion_tokens": 1_000_000}
    assert run_cost(prices, ["nope", "gpt-4o-mini"], usage) == pytest.approx(0.9)
    assert run_cost(prices, ["nope"], usage) is None
    table.write_text('{"m": {"input": "cheap"}}')
    with pytest.raises(ConfigError, match="bad price for 'm'"):
        load_price_table(table)
