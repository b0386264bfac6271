"""The data layer on the real RoleBench files and on small fixtures: counts, `type`, joins, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rolebench.data.joins import normalise_types, raw_answers
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples, split_files_status
from rolebench.data.source import DataSource
from rolebench.data.splits import SPLITS
from rolebench.errors import DataError


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize(
    ("split", "rows", "roles", "with_baseline"),
    [
        ("zh_general", 1451, 5, 1451),
        ("zh_specific", 239, 5, 239),
        ("eng_role_general", 5000, 10, 0),  # its rolegpt_baseline.jsonl is on the Hub only
        ("eng_role_specific", 2534, 10, 696),  # 500 exact joins, 196 more once questions are stripped
        ("eng_instruct_specific", 4750, 95, 4750),
    ],
)
def test_real_splits_load_with_counts_and_baseline_join(rolebench_data, split, rows, roles, with_baseline):
    samples = load_samples(split, resolve_source(rolebench_data))
    assert len(samples) == rows
    assert len({s.role for s in samples}) == roles
    assert sum(s.baseline is not None for s in samples) == with_baseline
    assert all(s.references and all(isinstance(r, str) for r in s.references) for s in samples)
    assert all(s.description for s in samples)


def test_every_reference_candidate_is_kept(rolebench_data):
    samples = load_samples("zh_general", resolve_source(rolebench_data))
    assert max(len(s.references) for s in samples) == 5
    assert sum(len(s.references) == 5 for s in samples) == 1289


def test_type_is_always_a_list(rolebench_data):
    samples = load_samples("eng_role_specific", resolve_source(rolebench_data))
    assert all(isinstance(s.types, tuple) and s.types for s in samples)
    assert {t for s in samples for t in s.types} <= {"script_based", "script_agnostic"}
    assert normalise_types("script_based") == ("script_based",)
    assert normalise_types(["a", "b"]) == ("a", "b")
    assert normalise_types(None) == ()


def test_questions_are_kept_raw_for_the_join(rolebench_data):
    samples = load_samples("zh_specific", resolve_source(rolebench_data))
    raw = [s for s in samples if s.question != s.question.strip()]
    assert raw, "the Chinese role-specific questions carry leading spaces upstream"
    assert all(s.baseline is not None for s in raw)


def test_raw_file_absent_means_no_raw_answers(rolebench_data):
    samples = load_samples("zh_general", resolve_source(rolebench_data), limit=3)
    assert [s.raw_answer for s in samples] == [None, None, None]
    status = split_files_status("zh_general", resolve_source(rolebench_data))
    assert status["instructions-zh/instructions-general.jsonl"] is False
    assert status["rolebench-zh/general/test.jsonl"] is True


def _mini_dataset(root: Path, raw_rows: list[dict] | None) -> DataSource:
    write_jsonl(
        root / "rolebench-zh/general/test.jsonl",
        [
            {"role": "李白", "question": " 写一首诗。", "generated": ["床前明月光"]},
            {"role": "李白", "question": "你好", "generated": ["你好呀", "幸会"]},
        ],
    )
    write_jsonl(
        root / "rolebench-zh/general/rolegpt_baseline.jsonl",
        [{"role": "李白", "question": " 写一首诗。", "generated": ["举头望明月"]}],
    )
    (root / "profiles-zh").mkdir(parents=True)
    (root / "profiles-zh/desc.json").write_text(json.dumps({"李白": "诗仙"}), encoding="utf-8")
    if raw_rows is not None:
        write_jsonl(root / "instructions-zh/instructions-general.jsonl", raw_rows)
    return resolve_source(root)


@pytest.mark.parametrize(
    "fields",
    [
        ("instruction", "target"),
        ("instruction", "answer"),
        ("question", "output"),
        ("instruction", "generated"),
    ],
)
def test_raw_answers_join_on_the_instruction_text(tmp_path, fields):
    q, a = fields
    value = ["原始答案"] if a == "generated" else "原始答案"
    source = _mini_dataset(tmp_path, [{"id": 1, q: "写一首诗。\n", a: value}])  # the dataset's trailing \n
    first, second = load_samples("zh_general", source)
    assert first.raw_answer == "原始答案" and first.baseline == "举头望明月"
    assert second.raw_answer is None and second.baseline is None
    assert second.references == ("你好呀", "幸会")


def test_raw_answers_with_unknown_fields_fail_clearly(tmp_path):
    source = _mini_dataset(tmp_path, [{"prompt": "写一首诗。", "response": "x"}])
    with pytest.raises(DataError, match="instructions-general.jsonl:1") as info:
        raw_answers(SPLITS["zh_general"], source)
    assert "instruction" in str(info.value) and "target" in str(info.value)
    # a right field of the wrong type is named too, never turned into text
    source = _mini_dataset(tmp_path / "typed", [{"id": 1, "instruction": "写一首诗。", "target": {"a": 1}}])
    with pytest.raises(DataError, match="`target` must be a string or a list of strings"):
        raw_answers(SPLITS["zh_general"], source)


def test_the_datasets_own_raw_answer_file_gives_raw_for_every_english_general_item(rolebench_data):
    """Issue 32.1: `instructions-eng/instructions-general.jsonl` as the dataset ships it
    (`{"id", "instruction", "target"}`) joins every English role-generalization general test item."""
    samples = load_samples("eng_role_general", resolve_source(rolebench_data))
    assert all(s.raw_answer is not None for s in samples) and len(samples) == 5000
    item = next(
        s for s in samples if s.question.startswith("Insert a comma in this sentence: It was raining")
    )
    assert item.raw_answer == "It was raining heavily, the streets were slick."


def test_malformed_jsonl_names_file_and_line(tmp_path):
    source = _mini_dataset(tmp_path, None)
    path = tmp_path / "rolebench-zh/general/test.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"test\.jsonl:3"):
        load_samples("zh_general", source)


def test_missing_file_names_path_and_how_to_get_it(tmp_path):
    with pytest.raises(DataError) as info:
        load_samples("eng_instruct_general", resolve_source(tmp_path))
    message = str(info.value)
    assert "rolebench-eng/instruction-generalization/general/test.jsonl" in message
    assert "rolebench data download" in message


def test_missing_role_description_is_one_clear_error(tmp_path):
    source = _mini_dataset(tmp_path, None)
    (tmp_path / "profiles-zh/desc.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DataError, match="no description for role '李白'"):
        load_samples("zh_general", source)


def test_missing_data_folder(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        resolve_source(tmp_path / "nowhere")


def test_hub_source_is_the_pinned_upstream_revision(monkeypatch):
    monkeypatch.delenv("ROLEBENCH_DATA", raising=False)
    source = resolve_source()
    assert (source.kind, source.location, source.revision) == (
        "hub",
        "ZenMoore/RoleBench",
        "a57ed54f9613921e4a5f1b63601a558cd5acf971",
    )


def test_demo_split_needs_no_download(tmp_path):
    samples = load_samples("demo_general", resolve_source(tmp_path))
    assert len(samples) == 18 and sum(s.baseline is None for s in samples) == 1
    assert all(s.raw_answer for s in samples)


def test_baseline_join_is_exact_first_then_stripped_when_unambiguous():
    from rolebench.data.joins import BaselineAnswers

    answers = BaselineAnswers(
        [("r", " q ", "spaced"), ("r", "x", "one"), ("r", " x", "two"), ("r", "y ", "only")]
    )
    assert answers.get("r", " q ") == "spaced"  # exact
    assert answers.get("r", "q") == "spaced"  # stripped, one candidate
    assert answers.get("r", "x") == "one"  # exact wins over the stripped fallback
    assert answers.get("r", "x  ") is None  # stripped names two answers: ambiguous, not joined
    assert answers.get("r", "y") == "only" and answers.get("other", "y") is None


def test_the_dataset_card_lists_rows_that_hold_rolegpts_own_answer(rolebench_data):
    from rolebench.data.resolve import resolve_source
    from rolebench.data.rows import collect

    issues = collect(resolve_source(str(rolebench_data))).issues
    assert any("72 of 1451 rows list the RoleGPT baseline answer" in issue for issue in issues)


def test_data_audit_takes_the_folder_as_data_info_does_and_the_old_flag_still(tmp_path, capsys):
    """`data audit DIR`, as `data info DIR` and `data verify DIR` (issue 36 item 7); `--data-dir DIR` still
    works, saying it is deprecated; both at once are refused in one line."""
    from rolebench.cli.main import main

    data = tmp_path / "data"
    write_jsonl(
        data / "rolebench-zh" / "role_specific" / "test.jsonl",
        [{"role": "李白", "question": "你会喝酒吗？", "generated": ["会"]}],
    )
    (data / "profiles-zh").mkdir(parents=True)
    (data / "profiles-zh" / "desc.json").write_text(json.dumps({"李白": "诗仙"}), encoding="utf-8")
    capsys.readouterr()
    assert main(["data", "audit", str(data)]) == 0
    positional = capsys.readouterr()
    assert f"source: local {data}" in positional.out or str(data) in positional.out
    assert "deprecated" not in positional.err
    assert main(["data", "audit", "--data-dir", str(data)]) == 0
    flagged = capsys.readouterr()
    assert flagged.out == positional.out
    assert "`data audit --data-dir DIR` is deprecated: write `data audit DIR`" in flagged.err
    assert main(["data", "audit", str(data), "--data-dir", str(data)]) == 2
    assert capsys.readouterr().err.count("two data folders given") == 1
