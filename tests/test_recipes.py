"""The data recipes against a real local OpenAI-compatible server with scripted generations.

Context-Instruct (parsing, factualness filter, ROUGE-L de-duplication, schema, cache), RoleGPT
(few-shot dialogue engineering with BM25 demonstrations, n answers + baseline), describe-role (the
two-step description and catchphrases in the released desc.json format), and the splits on the real
Chinese RoleBench files (deterministic, no (role, question) pair on both sides).
"""

# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.data.retrieval import DemonstrationRetriever
from rolebench.data.scripts import dialogue_pairs
from rolebench.recipes.data.dialogues import segments
from rolebench.recipes.data.qa_parse import parse_items
from rolebench.recipes.data.splits import SplitOptions, build_splits, pair_key
from tests.fake_openai import fake_openai  # noqa: F401 - `fake_openai` is a fixture


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def user_text(body: dict) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def generator_args(server, tmp_path: Path) -> list[str]:
    return [
        "--generator",
        "openai:fake-model",
        "--base-url",
        server.base_url,
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--no-progress",
    ]


SCRIPT_BASED = """Here are my questions.

**Question 1:** Sherlock Holmes, who is your closest friend and companion?
**Factualness:** High, because Dr. Watson shares his lodgings at 221B Baker Street.
**Response:** Watson, of course. He records my cases, rather romantically.

Question 2: Sherlock Holmes, who is your closest friend and companion, really?
Factualness: High, because it is the same question asked twice.
Response: I have told you already: Watson.

Question 3: Sherlock Holmes, how was your holiday on Mars?
Factualness: Low, because Mars travel does not exist in his stories.
Response: Mars? I have never left the Earth.

Question 4: Sherlock Holmes, which instrument do you play?
Factualness: High, because he plays the violin in the stories.
Response: The violin. It helps me think.

Question 5: Sherlock Holmes, a question without a label
Response: This item has no factualness, so it is dropped.
"""
SCRIPT_AGNOSTIC = """问题1：福尔摩斯，你最擅长的是什么？
事实性：高，因为他以演绎推理闻名。
回答：演绎法，华生。

问题2：福尔摩斯，你住在月球上吗？
事实性：低，因为这与原著无关。
回答：当然不是。
"""


def test_parse_items_accepts_markdown_chinese_labels_and_drops_incomplete_items():
    items = parse_items(SCRIPT_BASED)
    assert [i.number for i in items] == [1, 2, 3, 4]
    assert items[0].question == "Sherlock Holmes, who is your closest friend and companion?"
    assert items[0].reason.startswith("Dr. Watson shares")
    assert items[0].response == "Watson, of course. He records my cases, rather romantically."
    assert [i.factualness for i in items] == ["high", "high", "low", "high"]
    chinese = parse_items(SCRIPT_AGNOSTIC)
    assert [(i.question, i.factualness, i.response) for i in chinese] == [
        ("福尔摩斯，你最擅长的是什么？", "high", "演绎法，华生。"),
        ("福尔摩斯，你住在月球上吗？", "low", "当然不是。"),
    ]


def test_segments_pack_lines_and_cut_long_ones():
    assert segments(["a" * 3, "b" * 3, "c" * 3], 7) == ["aaa\nbbb", "ccc"]
    assert segments(["x" * 10], 4) == ["xxxx", "xxxx", "xx"]


def test_context_instruct_filters_deduplicates_and_writes_rolebench_rows(tmp_path, fake_openai):
    server = fake_openai(
        lambda body: SCRIPT_BASED if "following script" in user_text(body) else SCRIPT_AGNOSTIC
    )
    profile = write_rows(
        tmp_path / "profiles-eng-Sherlock Holmes.jsonl",
        [
            {
                "act_id": 1,
                "diag_id": 1,
                "role": "Watson",
                "content": "Holmes, you have been playing the violin all night.",
            },
            {"act_id": 1, "diag_id": 2, "role": "Sherlock Holmes", "content": "It helps me think, Watson."},
            {"act_id": 2, "diag_id": 1, "role": "Narrator", "content": "Baker Street, the next morning."},
        ],
    )
    out = tmp_path / "sherlock.jsonl"
    args = [
        "recipe",
        "context-instruct",
        "--role",
        "Sherlock Holmes",
        "--profile",
        str(profile),
        "--out",
        str(out),
        "--description",
        "A brilliant consulting detective.",
        "--segment-chars",
        "120",
        "--agnostic-requests",
        "1",
        "--language",
        "en",
        *generator_args(server, tmp_path),
    ]
    assert main(args) == 0
    assert server.count() == 3  # two script segments + one script-agnostic request
    prompts = [user_text(r.body) for r in server.received]
    assert sum("It helps me think, Watson." in p for p in prompts) == 1
    assert all("please indicate the factualness (high or low)" in p for p in prompts)
    assert any("Sherlock Holmes description A brilliant consulting detective." in p for p in prompts)
    rows = read_rows(out)
    assert [r["question"] for r in rows] == [
        "Sherlock Holmes, who is your closest friend and companion?",  # its near-duplicate (Q2) is dropped
        "Sherlock Holmes, which instrument do you play?",  # Q3 (low factualness), Q5 (no label) dropped
        "福尔摩斯，你最擅长的是什么？",
    ]
    assert rows[0] == {
        "role": "Sherlock Holmes",
        "question": rows[0]["question"],
        "generated": ["Watson, of course. He records my cases, rather romantically."],
        "type": ["script_based"],
    }
    assert rows[2]["type"] == ["script_agnostic"]
    assert main(args) == 0  # every generation comes from the cache now
    assert server.count() == 3
    assert read_rows(out) == rows


def test_context_instruct_dedup_threshold_is_a_flag(tmp_path, fake_openai):
    server = fake_openai(lambda body: SCRIPT_BASED)
    profile = tmp_path / "profile.txt"
    profile.write_text("Sherlock Holmes lives at 221B Baker Street with Dr. Watson.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "recipe",
                "context-instruct",
                "--role",
                "Sherlock Holmes",
                "--profile",
                str(profile),
                "--out",
                str(out),
                "--agnostic-requests",
                "0",
                "--dedup-threshold",
                "1.0",
                *generator_args(server, tmp_path),
            ]
        )
        == 0
    )
    assert len(read_rows(out)) == 3  # the near-duplicate is no exact duplicate: kept at threshold 1.0


ZH_DIALOGUE = [
    {"question": "大圣，你会七十二变吗？", "answer": "俺老孙七十二变，样样精通！"},
    {"question": "你的金箍棒有多重？", "answer": "一万三千五百斤，俺老孙耍得动！"},
    {"question": "你怕不怕唐僧念紧箍咒？", "answer": "师父一念咒，俺老孙就头疼！"},
]


def rolegpt_handler(body: dict) -> str:
    return f"answer {body.get('seed')} to {user_text(body)}"


def test_rolegpt_dialogue_engineering_n_answers_and_baseline(tmp_path, fake_openai):
    server = fake_openai(rolegpt_handler)
    dialogues = tmp_path / "profiles"
    write_rows(dialogues / "profiles-zh" / "profiles-zh-孙悟空.jsonl", ZH_DIALOGUE)
    desc = tmp_path / "desc.json"
    desc.write_text(
        json.dumps({"孙悟空": "生性聪明、活泼、忠诚。常用口头禅是：“俺老孙”"}, ensure_ascii=False), "utf-8"
    )
    instructions = write_rows(
        tmp_path / "instructions.jsonl",
        [{"instruction": " 金箍棒是什么做的？"}, {"instruction": "写一首关于月亮的诗。"}],
    )
    out = tmp_path / "general.jsonl"
    assert (
        main(
            [
                "recipe",
                "rolegpt",
                "--instructions",
                str(instructions),
                "--roles",
                "孙悟空",
                "--desc",
                str(desc),
                "--out",
                str(out),
                "--dialogues",
                str(dialogues),
                "--shots",
                "2",
                "--n",
                "3",
                *generator_args(server, tmp_path),
            ]
        )
        == 0
    )
    assert server.count() == 2 * 4  # 3 references + 1 baseline per instruction
    rows = read_rows(out)
    assert [r["question"] for r in rows] == [" 金箍棒是什么做的？", "写一首关于月亮的诗。"]  # raw, as written
    assert rows[0]["generated"] == [f"answer {s} to 金箍棒是什么做的？" for s in range(3)]
    assert read_rows(tmp_path / "general.baseline.jsonl")[0]["generated"] == [
        "answer 3 to 金箍棒是什么做的？"
    ]
    first = next(r.body for r in server.received if "金箍棒是什么做的" in user_text(r.body))
    assert [m["role"] for m in first["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert first["messages"][0]["content"].startswith("你是孙悟空，你的特征描述是：生性聪明")
    assert first["messages"][1]["content"] == "你的金箍棒有多重？"  # the BM25-best demonstration comes first
    assert first["messages"][2]["content"] == "一万三千五百斤，俺老孙耍得动！"


def test_script_dialogue_pairs_and_bm25_retrieval_in_english(tmp_path):
    script = write_rows(
        tmp_path / "profiles-eng-Jack Sparrow.jsonl",
        [
            {"act_id": 1, "diag_id": 1, "role": "Will", "content": "Where is the Black Pearl?"},
            {"act_id": 1, "diag_id": 2, "role": "Jack Sparrow", "content": "Gone, mate. Stolen."},
            {
                "act_id": 2,
                "diag_id": 1,
                "role": "Jack Sparrow",
                "content": "A line with nobody before it in its act.",
            },
            {"act_id": 2, "diag_id": 2, "role": "Elizabeth", "content": "Do you like rum?"},
            {"act_id": 2, "diag_id": 3, "role": "Jack Sparrow", "content": "Why is the rum always gone?"},
        ],
    )
    pairs = dialogue_pairs(script, "Jack Sparrow")
    assert pairs == [
        ("Where is the Black Pearl?", "Gone, mate. Stolen."),
        ("Do you like rum?", "Why is the rum always gone?"),
    ]
    assert DemonstrationRetriever(pairs, "en").top("Tell me about rum.", 1) == [pairs[1]]


def describe_handler(body: dict) -> str:
    text = user_text(body)
    if "role description model" in text:
        return "The role's description is: the role is a brilliant detective who lives on Baker Street."
    if "change the third person" in text:
        return "Your description is: You are a brilliant detective who lives on Baker Street."
    if "Sherlock Holmes" in text:
        return '"Elementary, my dear Watson" / "The game is afoot"'
    return "no"


def test_describe_role_two_steps_and_catchphrases_in_released_format(tmp_path, fake_openai):
    server = fake_openai(describe_handler)
    out = tmp_path / "desc.json"
    out.write_text(json.dumps({"Existing": "kept"}), encoding="utf-8")
    assert (
        main(
            [
                "recipe",
                "describe-role",
                "--role",
                "Sherlock Holmes",
                "--role",
                "John Doe",
                "--out",
                str(out),
                *generator_args(server, tmp_path),
            ]
        )
        == 0
    )
    table = json.loads(out.read_text(encoding="utf-8"))
    assert table == {
        "Existing": "kept",
        "Sherlock Holmes": "You are a brilliant detective who lives on Baker Street. Your catchphrases are: "
        '"Elementary, my dear Watson" / "The game is afoot"',
        "John Doe": "You are a brilliant detective who lives on Baker Street.",
    }
    second = [r.body for r in server.received if "change the third person" in user_text(r.body)]
    assert len(second) == 2 and [m["role"] for m in second[0]["messages"]] == ["user", "assistant", "user"]


def test_describe_role_chinese_catchphrase_format(tmp_path, fake_openai):
    from rolebench.recipes.data.describe import entry_text, parse_catchphrases

    assert parse_catchphrases("“俺老孙”/“我齐天大圣”") == ["俺老孙", "我齐天大圣"]
    assert parse_catchphrases('"no"') == []
    assert (
        entry_text("生性聪明。", ["俺老孙", "我齐天大圣"], "zh")
        == "生性聪明。常用口头禅是：“俺老孙”、“我齐天大圣”"
    )
    assert entry_text("A pirate", ["Savvy?"], "en") == 'A pirate. Your catchphrase is: "Savvy?"'


@pytest.fixture
def zh_data(rolebench_data: Path, tmp_path: Path) -> Path:
    """The real Chinese files, linked (not copied) into a recipe input folder."""
    root = tmp_path / "zh"
    for kind in ("general", "role_specific"):
        (root / kind).mkdir(parents=True)
        for name in ("train.jsonl", "test.jsonl", "rolegpt_baseline.jsonl"):
            (root / kind / name).symlink_to(rolebench_data / "rolebench-zh" / kind / name)
    return root


def test_build_splits_on_real_chinese_data_never_leak_and_are_deterministic(zh_data, tmp_path):
    first = build_splits(SplitOptions(data=zh_data, out=tmp_path / "a", seed=3, held_out_roles=("李白",)))
    build_splits(SplitOptions(data=zh_data, out=tmp_path / "b", seed=3, held_out_roles=("李白",)))
    build_splits(SplitOptions(data=zh_data, out=tmp_path / "c", seed=4, held_out_roles=("李白",)))
    for setting in ("instruction-generalization", "role-generalization"):
        for kind in ("general", "role_specific"):
            folder = tmp_path / "a" / setting / kind
            train, test = read_rows(folder / "train.jsonl"), read_rows(folder / "test.jsonl")
            assert not {pair_key(r) for r in train} & {pair_key(r) for r in test}
            inputs = sum(len(read_rows(zh_data / kind / n)) for n in ("train.jsonl", "test.jsonl"))
            assert len(train) + len(test) == inputs
            baseline = read_rows(folder / "rolegpt_baseline.jsonl")
            assert {pair_key(r) for r in baseline} <= {pair_key(r) for r in test}
            assert (folder / "test.jsonl").read_bytes() == (
                tmp_path / "b" / setting / kind / "test.jsonl"
            ).read_bytes()
            if setting == "role-generalization":
                assert {r["role"] for r in test} == {"李白"} and "李白" not in {r["role"] for r in train}
            else:
                assert {r["role"] for r in test} == {r["role"] for r in train}
                assert 0.15 < len(test) / (len(train) + len(test)) < 0.25
    other = tmp_path / "c" / "instruction-generalization" / "general" / "test.jsonl"
    assert (
        other.read_bytes()
        != (tmp_path / "a" / "instruction-generalization" / "general" / "test.jsonl").read_bytes()
    )
    assert first["held_out_roles"] == ["李白"]


def test_build_splits_keeps_every_row_of_a_pair_on_one_side(tmp_path):
    rows = [
        {"role": "A", "question": f"q{i % 5}" + (" " if i % 2 else ""), "generated": [str(i)]}
        for i in range(40)
    ]
    rows += [{"role": "B", "question": f"q{i}", "generated": ["x"]} for i in range(10)]
    write_rows(tmp_path / "data" / "general" / "rows.jsonl", rows)
    assert (
        main(
            [
                "recipe",
                "build-splits",
                "--data",
                str(tmp_path / "data"),
                "--out",
                str(tmp_path / "out"),
                "--seed",
                "1",
                "--held-out-roles",
                "B",
            ]
        )
        == 0
    )
    folder = tmp_path / "out" / "instruction-generalization" / "general"
    train, test = read_rows(folder / "train.jsonl"), read_rows(folder / "test.jsonl")
    assert not {pair_key(r) for r in train} & {pair_key(r) for r in test}
    assert len({pair_key(r) for r in test if r["role"] == "A"}) == 1  # 20% of A's 5 distinct pairs


def test_recipe_errors_are_one_line(tmp_path, capsys):
    assert main(["recipe", "build-splits", "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert (
        main(
            [
                "recipe",
                "rolegpt",
                "--instructions",
                str(tmp_path / "none.jsonl"),
                "--roles",
                "X",
                "--desc",
                str(tmp_path / "d.json"),
                "--out",
                str(tmp_path / "o.jsonl"),
                "--generator",
                "nope:x",
            ]
        )
        == 2
    )
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("rolebench: error:")]
    assert len(errors) == 2
