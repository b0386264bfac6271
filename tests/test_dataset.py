"""The packaged dataset: build from the real files, load with `datasets`, card, checksums, verify, read-back.

The real RoleBench files come from $ROLEBENCH_DATA or ../shared/rolebench (skipped when absent); the
small upstream-layout folder of `mini_upstream` is written here to cover what that copy lacks
(raw-answer files, a string `type`, shards).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from model_adapters.files import file_sha256
from rolebench.cli.main import main
from rolebench.data.card import read_front_matter
from rolebench.data.layout import CONFIG_NAMES, MANIFEST_NAME, PROFILE_CONFIGS, QA_CONFIGS
from rolebench.data.manifest import packaged_manifest, read_manifest
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.errors import DataError

pa_parquet = pytest.importorskip(
    "pyarrow.parquet", reason="building the dataset needs pyarrow (rolebench[data])"
)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table_rows(root: Path, config: str, split: str) -> list[dict]:
    files = sorted((root / config).glob(f"{split}-*.parquet"))
    return [row for f in files for row in pa_parquet.read_table(f).to_pylist()]


def as_list(value) -> list:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


@pytest.fixture(scope="module")
def built(rolebench_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("build") / "rolebench-v1.0"
    assert main(["data", "build", str(rolebench_data), "--out", str(out), "--no-progress"]) == 0
    return out


def test_every_config_loads_with_datasets(built: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    tables = read_manifest(built / MANIFEST_NAME).extra["tables"]
    for config in CONFIG_NAMES:
        loaded = datasets.load_dataset(str(built), config, cache_dir=str(tmp_path / "hf-cache"))
        expected = {t["split"]: t["rows"] for t in tables if t["config"] == config}
        assert {split: len(ds) for split, ds in loaded.items()} == expected
    test = datasets.load_dataset(
        str(built), "instruction_generalization_zh", split="test", cache_dir=str(tmp_path / "hf-cache")
    )
    assert test.column_names == [
        "id",
        "role",
        "question",
        "references",
        "type",
        "task_kind",
        "description",
        "rolegpt_baseline",
        "raw_answer",
    ]
    assert test[0]["id"] == "zh_general/0" and isinstance(test[0]["references"], list)


def test_row_counts_equal_the_source_files(built: Path, rolebench_data: Path) -> None:
    for config in QA_CONFIGS.values():
        for split in ("train", "test"):
            files = [rolebench_data / s.file(f"{split}.jsonl") for s in config.split_defs()]
            expected = sum(len(read_lines(f)) for f in files if f.is_file())
            assert len(table_rows(built, config.name, split)) == expected, (config.name, split)
    for profiles in PROFILE_CONFIGS.values():
        descriptions = json.loads((rolebench_data / profiles.file).read_text(encoding="utf-8"))
        rows = table_rows(built, profiles.name, "train")
        assert {r["role"]: r["description"] for r in rows} == descriptions


def test_every_source_row_appears_exactly_once(built: Path, rolebench_data: Path) -> None:
    for config in QA_CONFIGS.values():
        for split in ("train", "test"):
            rows = table_rows(built, config.name, split)
            assert len({r["id"] for r in rows}) == len(rows)
            for split_def in config.split_defs():
                source = rolebench_data / split_def.file(f"{split}.jsonl")
                if not source.is_file():
                    assert not [r for r in rows if r["task_kind"] == split_def.kind]
                    continue
                expected = Counter(
                    (r["role"], r["question"], tuple(as_list(r["generated"])), tuple(as_list(r.get("type"))))
                    for r in read_lines(source)
                )
                got = Counter(
                    (r["role"], r["question"], tuple(r["references"]), tuple(r["type"]))
                    for r in rows
                    if r["task_kind"] == split_def.kind
                )
                assert got == expected, (config.name, split, split_def.id)


def test_baseline_column_is_the_raw_role_question_join(built: Path, rolebench_data: Path) -> None:
    baseline: dict[tuple[str, str], str] = {}
    for rec in read_lines(rolebench_data / "rolebench-zh/role_specific/rolegpt_baseline.jsonl"):
        baseline.setdefault((rec["role"], rec["question"]), as_list(rec["generated"])[0])
    rows = [
        r
        for r in table_rows(built, "instruction_generalization_zh", "test")
        if r["task_kind"] == "role_specific"
    ]
    assert [r["rolegpt_baseline"] for r in rows] == [baseline.get((r["role"], r["question"])) for r in rows]
    assert any(r["question"] != r["question"].strip() for r in rows)  # raw questions kept
    assert all(r["raw_answer"] is None for r in table_rows(built, "instruction_generalization_zh", "test"))


def test_card_front_matter_configs_and_reports(built: Path, rolebench_data: Path) -> None:
    meta = read_front_matter(built / "README.md")
    assert meta["license"] == "apache-2.0"
    assert [c["config_name"] for c in meta["configs"]] == list(CONFIG_NAMES)
    for config in meta["configs"]:
        for data_files in config["data_files"]:
            assert all((built / path).is_file() for path in data_files["path"])
    card = (built / "README.md").read_text(encoding="utf-8")
    assert "arXiv: 2310.00746" in card and "Zekun Moore Wang" in card
    assert "`instructions-zh/instructions-general.jsonl` | raw_answer is null" in card
    assert "`rolebench-eng/instruction-generalization/general/test.jsonl` | no general rows" in card
    assert "27 rows share 10 (role, question) keys (17 duplicate rows" in card
    assert "ZenMoore/RoleBench` at revision `a57ed54f9613921e4a5f1b63601a558cd5acf971`" in card
    for digest in (e["sha256"] for e in packaged_manifest("a57ed54").files.values()):
        assert digest in card
    assert "**v1.0**" in card
    # a file rolebench holds no Hub checksum of (the raw answers, from another copy) is read and recorded
    # as this copy's bytes, never as the Hub's (issue 32.1)
    raw = "instructions-eng/instructions-general.jsonl"
    if (rolebench_data / raw).is_file():
        origin = json.loads((built / "checksums.json").read_text(encoding="utf-8"))["source"]
        assert raw not in origin["files"] and origin["unverified"][raw] == file_sha256(rolebench_data / raw)
        local = card.index("| file (local copy, unverified) | sha256 |")
        assert card.index(f"| `{raw}` |") > local and "not the Hub's" in card


def test_verify_catches_a_changed_byte_a_missing_and_an_extra_file(
    built: Path, tmp_path: Path, capsys
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    assert main(["data", "verify", str(copy)]) == 0
    shard = copy / "profiles_zh/train-00000-of-00001.parquet"
    original = shard.read_bytes()
    shard.write_bytes(original[:100] + bytes([original[100] ^ 1]) + original[101:])
    assert main(["data", "verify", str(copy)]) == 1
    assert "CHANGED   profiles_zh/train-00000-of-00001.parquet" in capsys.readouterr().out
    shard.unlink()
    assert main(["data", "verify", str(copy)]) == 1
    assert "MISSING   profiles_zh/train-00000-of-00001.parquet" in capsys.readouterr().out
    assert main(["data", "verify", str(copy), "--partial"]) == 0
    shard.write_bytes(original)
    (copy / "profiles_zh/notes.txt").write_text("not part of the build")
    assert main(["data", "verify", str(copy)]) == 1
    assert "EXTRA     profiles_zh/notes.txt" in capsys.readouterr().out


def test_shared_copy_verifies_with_the_packaged_manifest(
    rolebench_data: Path, tmp_path: Path, capsys
) -> None:
    assert main(["data", "verify", str(rolebench_data)]) == 0
    out = capsys.readouterr().out
    assert "13 of 13 files match" in out
    assert "absent    instructions-zh/* (" in out
    assert "absent    rolebench-eng/instruction-generalization/general/test.jsonl (" in out
    copy = tmp_path / "copy"
    shutil.copytree(rolebench_data / "profiles-zh", copy / "profiles-zh")
    (copy / "profiles-zh/desc.json").write_text("{}", encoding="utf-8")
    assert main(["data", "verify", str(copy), "--partial"]) == 1
    assert "CHANGED   profiles-zh/desc.json" in capsys.readouterr().out


def test_build_reads_back_as_the_same_samples(built: Path, rolebench_data: Path) -> None:
    upstream, packaged = resolve_source(rolebench_data), resolve_source(built)
    assert packaged.kind == "packaged"
    for split in (
        "zh_general",
        "zh_specific",
        "eng_role_general",
        "eng_role_specific",
        "eng_instruct_specific",
    ):
        assert load_samples(split, packaged) == load_samples(split, upstream), split
    assert load_samples("zh_general", packaged, file="train.jsonl") == load_samples(
        "zh_general", upstream, file="train.jsonl"
    )
    described = packaged.describe()
    checksums = read_manifest(built / MANIFEST_NAME).files
    assert described["dataset_version"] == "v1.0"
    assert described["upstream"] == {
        "repo": "ZenMoore/RoleBench",
        "revision": "a57ed54f9613921e4a5f1b63601a558cd5acf971",
    }
    assert described["parquet"] and all(checksums[p]["sha256"] == d for p, d in described["parquet"].items())
    with pytest.raises(
        DataError, match="no rows for rolebench-eng/instruction-generalization/general/test.jsonl"
    ):
        load_samples("eng_instruct_general", packaged)


def test_info_lists_counts_and_missing_files(built: Path, capsys) -> None:
    assert main(["data", "info", str(built)]) == 0
    out = capsys.readouterr().out
    zh_general = next(line for line in out.splitlines() if line.startswith("zh_general"))
    assert zh_general.split()[3:6] == ["1451", "5933", "5"]
    assert "missing: instructions-zh/instructions-general.jsonl" in out
    assert (
        "packaged dataset v1.0, built from ZenMoore/RoleBench@a57ed54f9613921e4a5f1b63601a558cd5acf971" in out
    )


def test_clean_build_is_v11_with_a_changelog(rolebench_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "v1.1"
    assert main(["data", "build", str(rolebench_data), "--out", str(out), "--clean", "--no-progress"]) == 0
    manifest = read_manifest(out / MANIFEST_NAME)
    assert manifest.extra["version"] == "v1.1"
    rows = table_rows(out, "role_generalization_eng", "test")
    assert len(rows) == 7534 - 17
    keys = Counter((r["task_kind"], r["role"], r["question"]) for r in rows)
    assert max(keys.values()) == 1
    assert all(len(set(r["type"])) == len(r["type"]) for r in rows)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "**v1.1**" in card and "**v1.0**" in card
    assert "merged 27 rows sharing 10 (task_kind, role, question) keys into 10 rows" in card
    assert (
        main(["data", "push", str(out), "--repo", "org/name", "--version", "v1.0"]) == 2
    )  # version mismatch


def test_build_never_deletes_a_foreign_folder(rolebench_data: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_text("user file")
    assert main(["data", "build", str(rolebench_data), "--out", str(out), "--no-progress"]) == 2
    assert "not a previous rolebench build" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "user file"


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def mini_upstream(tmp_path: Path) -> Path:
    """A small folder in the upstream layout with the files the shared copy lacks (raw answers)."""
    root = tmp_path / "mini"
    general = [
        {"role": "李白", "question": f" 第{i}个问题 ", "generated": [f"答{i}", f"又答{i}"]} for i in range(40)
    ]
    write_jsonl(root / "rolebench-zh/general/test.jsonl", general)
    write_jsonl(
        root / "rolebench-zh/general/train.jsonl", [{"role": "张飞", "question": "你好", "generated": ["俺"]}]
    )
    write_jsonl(
        root / "rolebench-zh/general/rolegpt_baseline.jsonl",
        [{"role": "李白", "question": " 第3个问题 ", "generated": ["基线"]}],
    )
    write_jsonl(
        root / "rolebench-zh/role_specific/test.jsonl",
        [{"role": "李白", "question": "你的诗？", "generated": ["床前明月光"], "type": "script_based"}],
    )
    write_jsonl(
        root / "instructions-zh/instructions-general.jsonl",
        [{"instruction": f"第{i}个问题", "answer": f"原答{i}"} for i in range(0, 40, 2)],
    )
    (root / "profiles-zh").mkdir(parents=True)
    (root / "profiles-zh/desc.json").write_text(
        json.dumps({"李白": "诗仙", "张飞": "猛将"}, ensure_ascii=False), encoding="utf-8"
    )
    return root


def test_mini_build_shards_joins_and_round_trip(mini_upstream: Path, tmp_path: Path) -> None:
    out = tmp_path / "mini-build"
    assert (
        main(
            [
                "data",
                "build",
                str(mini_upstream),
                "--out",
                str(out),
                "--max-shard-mb",
                "0.0005",
                "--no-progress",
            ]
        )
        == 0
    )
    shards = sorted((out / "instruction_generalization_zh").glob("test-*.parquet"))
    assert len(shards) > 1 and shards[0].name.endswith(f"-of-{len(shards):05d}.parquet")
    rows = table_rows(out, "instruction_generalization_zh", "test")
    assert [r["id"] for r in rows] == [f"zh_general/{i}" for i in range(40)] + ["zh_specific/0"]
    assert [r["raw_answer"] for r in rows[:4]] == ["原答0", None, "原答2", None]
    assert rows[3]["rolegpt_baseline"] == "基线" and rows[-1]["type"] == ["script_based"]
    upstream, packaged = resolve_source(mini_upstream), resolve_source(out)
    for split in ("zh_general", "zh_specific"):
        assert load_samples(split, packaged) == load_samples(split, upstream)
    again = tmp_path / "mini-build-2"
    assert (
        main(
            [
                "data",
                "build",
                str(mini_upstream),
                "--out",
                str(again),
                "--max-shard-mb",
                "0.0005",
                "--no-progress",
            ]
        )
        == 0
    )
    assert (
        read_manifest(again / MANIFEST_NAME).files == read_manifest(out / MANIFEST_NAME).files
    )  # reproducible
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "revision `unknown`" in card  # a folder matching no known revision is not passed off as upstream
