"""RoleBench as a reward: `rouge_l_reward` gives the scorer's own numbers in TRL's signature, and
`load_prompts` gives the prompts `rolebench evaluate` sends, with their references."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from rolebench import rouge_l
from rolebench.errors import ConfigError, DataError
from rolebench.rewards import load_prompts, make_reward, rouge_l_reward


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def real_items(data: Path, relpath: str, n: int) -> tuple[list[str], list[list[str]]]:
    """(a row's last candidate answer, the row's other candidates) for the first n rows with two or more."""
    rows = [json.loads(line) for line in (data / relpath).read_text(encoding="utf-8").splitlines()]
    items = [(r["generated"][-1], r["generated"][:-1]) for r in rows if len(r["generated"]) > 1][:n]
    return [p for p, _ in items], [r for _, r in items]


@pytest.mark.parametrize(
    ("relpath", "language"),
    [
        ("rolebench-zh/general/test.jsonl", "zh"),
        ("rolebench-eng/role-generalization/general/test.jsonl", "en"),
    ],
)
def test_the_reward_is_the_rolebench_f_measure_for_texts_and_chat_completions(
    rolebench_data, relpath, language
):
    texts, references = real_items(rolebench_data, relpath, 200)
    expected = rouge_l(texts, references, language, protocol="rolebench")
    assert expected != rouge_l(texts, references, language, protocol="rolellm")  # F, not the paper's recall
    columns = {"references": references, "language": [language] * len(texts), "role": ["r"] * len(texts)}
    assert rouge_l_reward(prompts=[None] * len(texts), completions=texts, **columns) == expected
    conversations = [[{"role": "user", "content": "q"}, *chat(t)] for t in texts]  # the last assistant turn
    assert rouge_l_reward(prompts=None, completions=conversations, trainer_state=None, **columns) == expected
    parts = [[{"role": "assistant", "content": [{"type": "text", "text": t}]}] for t in texts]
    assert rouge_l_reward(completions=parts, references=references, language=language) == expected


def test_a_batch_mixes_languages_and_items_without_references_get_no_reward():
    completions = [chat("I am the Monkey King."), "我是齐天大圣孙悟空", "anything", "nothing", "x"]
    references = [["I am Sun Wukong, the Monkey King."], "俺老孙是齐天大圣", None, [], ["  "]]
    scores = rouge_l_reward(
        completions=completions, references=references, language=["en", "zh", "en", "zh", "en"]
    )
    assert (
        scores[0]
        == rouge_l(["I am the Monkey King."], [["I am Sun Wukong, the Monkey King."]], "en", "rolebench")[0]
    )
    assert scores[1] == rouge_l(["我是齐天大圣孙悟空"], [["俺老孙是齐天大圣"]], "zh", "rolebench")[0]
    assert scores[2:] == [None, None, None]


def test_make_reward_scores_under_another_protocol_and_warns_about_recall():
    texts, refs = ["I am the Monkey King, the Monkey King, the Monkey King."], [["I am the Monkey King."]]
    assert make_reward() is rouge_l_reward
    with pytest.warns(UserWarning, match="recall.*ramble"):
        recall = make_reward("rolellm")
    assert recall.__name__ == "rouge_l_rolellm"  # what TRL logs it under
    assert recall(completions=texts, references=refs, language="en") == rouge_l(texts, refs, "en", "rolellm")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opencompass = make_reward("opencompass")
    assert opencompass(completions=texts, references=refs, language="en") == rouge_l(
        texts, refs, "en", "opencompass"
    )
    blank_first = [["", "I am the Monkey King."]]  # scored as given: opencompass counts the first only
    assert opencompass(completions=texts, references=blank_first, language="en") == rouge_l(
        texts, blank_first, "en", "opencompass"
    )
    with pytest.raises(ConfigError, match="did you mean 'rolebench'"):
        make_reward("rolebenh")


@pytest.mark.parametrize(
    ("completions", "message"),
    [
        ([{"role": "assistant", "content": "a"}], r"completions\[0\] is a dict"),
        ([[{"role": "user", "content": "a"}]], r"completions\[0\] has no assistant message"),
        ([[]], r"completions\[0\] is an empty list"),
        ([None], r"completions\[0\] is None"),
        ([[{"role": "assistant", "content": 3}]], r"the content of completions\[0\] is an int"),
        ("text", "completions is a str, not a list"),
    ],
)
def test_a_completion_of_the_wrong_shape_is_one_line(completions, message):
    with pytest.raises(DataError, match=message) as caught:
        rouge_l_reward(completions=completions, references=[["a"]], language="en")
    assert "\n" not in str(caught.value) and "TRL" in str(caught.value)


def test_missing_columns_and_bad_values_are_one_line():
    with pytest.raises(ConfigError, match="no `references` column"):
        rouge_l_reward(prompts=["p"], completions=["a"], language=["en"])
    with pytest.raises(ConfigError, match="no `language` column"):
        rouge_l_reward(completions=["a"], references=[["a"]])
    with pytest.raises(ConfigError, match="unknown scoring language 'fr'"):
        rouge_l_reward(completions=["a"], references=[["a"]], language=["fr"])
    with pytest.raises(ConfigError, match="2 completions but references is not a list of 2"):
        rouge_l_reward(completions=["a", "b"], references=[["a"]], language="en")
    with pytest.raises(DataError, match=r"references\[0\] is an int"):
        rouge_l_reward(completions=["a"], references=[3], language="en")


@pytest.mark.parametrize(
    ("method", "shots", "turns"),
    [("zero-shot", None, 2), ("few-shot-dialogue", 2, 6), ("few-shot-prompt", None, 2)],
)
def test_prompts_are_exactly_what_evaluate_sends(tmp_path, method, shots, turns):
    from rolebench.data.source import DataSource
    from rolebench.evaluation.plan import plan_tasks
    from rolebench.run.definition import RunDefinition
    from rolebench.tasks.catalogue import resolve

    with pytest.warns(UserWarning, match="leaks"):
        dataset = load_prompts(
            "rolebench_demo_specific", part="test", limit=5, elicitation=method, shots=shots, allow_test=True
        )
    definition = RunDefinition(
        model="baseline:rolegpt", tasks=("rolebench_demo_specific",), limit=5, elicitation=method, shots=shots
    ).checked()
    [plan] = plan_tasks(
        definition, resolve(["rolebench_demo_specific"])[0], DataSource("local", str(tmp_path))
    )
    assert all(
        len(messages) == turns for messages in dataset["prompt"]
    )  # dialogue: 2 demonstrations as turns
    if method == "few-shot-prompt":  # the demonstrations sit in the user turn
        assert all(
            len(m[-1]["content"]) > len(r.meta["question"]) + 20
            for m, r in zip(dataset["prompt"], plan.requests, strict=True)
        )
    assert dataset.column_names == ["prompt", "references", "language", "role", "id"]
    assert dataset["id"] == [r.id for r in plan.requests]  # the same --limit sample
    assert dataset["prompt"] == [r.messages for r in plan.requests]
    assert dataset["references"] == [list(s.references) for s in plan.samples]
    assert dataset["role"] == [s.role for s in plan.samples] and set(dataset["language"]) == {"en"}


def test_train_prompts_of_a_group_cover_its_splits_with_a_stratified_limit(rolebench_data):
    dataset = load_prompts("rolebench_zh", limit=10, data_dir=str(rolebench_data))
    assert len(dataset) == 20
    assert {i.rsplit("/", 2)[0] for i in dataset["id"]} == {"zh_general", "zh_specific"}
    assert all("/train/" in i for i in dataset["id"])
    assert len(set(dataset["role"][:10])) == 5  # every role gets its share of the sample
    first = dataset[0]
    assert first["prompt"][0]["role"] == "system" and first["prompt"][0]["content"].startswith(
        f"你是{first['role']}"
    )
    assert first["prompt"][-1]["role"] == "user" and first["references"] and first["language"] == "zh"
    same = load_prompts("zh_general", limit=10, data_dir=str(rolebench_data))
    assert same["id"] == dataset["id"][:10]  # a split id names the same rows


def test_bad_prompt_arguments_are_one_line(rolebench_data):
    with pytest.raises(ConfigError, match="unknown RoleBench split 'zh_genral'.*did you mean 'zh_general'"):
        load_prompts("zh_genral")
    with pytest.raises(ConfigError, match="unknown part 'tset'.*did you mean 'test'"):
        load_prompts("zh_general", part="tset")
    with pytest.raises(ConfigError, match="leaks.*allow_test=True"):
        load_prompts("demo_general", part="test")
    with pytest.raises(ConfigError, match="unknown elicitation method 'zero_shot'.*did you mean 'zero-shot'"):
        load_prompts("zh_general", elicitation="zero_shot")
    with pytest.raises(ConfigError, match="shots -1 is not allowed"):
        load_prompts("zh_general", elicitation="few-shot-dialogue", shots=-1)
    with pytest.raises(DataError, match="has no script file profiles-zh/profiles-zh-"):  # shots come from it
        load_prompts("zh_general", elicitation="few-shot-dialogue", limit=2, data_dir=str(rolebench_data))
    with pytest.raises(ConfigError, match="limit 0 is not allowed"):
        load_prompts("zh_general", limit=0)
    with pytest.raises(DataError, match="train.jsonl not found"):
        load_prompts("demo_general")  # the demo has no train part


def test_a_row_without_references_is_one_line(tmp_path):
    folder = tmp_path / "rolebench-zh" / "general"
    folder.mkdir(parents=True)
    (tmp_path / "profiles-zh").mkdir()
    (tmp_path / "profiles-zh" / "desc.json").write_text(json.dumps({"李白": "诗人"}, ensure_ascii=False))
    rows = [
        {"role": "李白", "question": "你是谁？", "generated": ["我是李白。"]},
        {"role": "李白", "question": "q"},
    ]
    (folder / "train.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    with pytest.raises(DataError, match="generated.*train.jsonl:2"):
        load_prompts("zh_general", data_dir=str(tmp_path))
