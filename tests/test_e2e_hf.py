"""End to end: `rolebench evaluate` with a tiny random Hugging Face model built in a fixture."""

from __future__ import annotations

import json

from rolebench.cli.main import main
from rolebench.run.folder import read_results
from rolebench.storage.records import RecordStore


def test_evaluate_tiny_model_on_real_chinese_tasks(tiny_model_dir, rolebench_data, tmp_path, capsys):
    out = tmp_path / "run"
    args = [
        "evaluate",
        "--model",
        f"hf:{tiny_model_dir}",
        "--tasks",
        "rolebench_zh",
        "--limit",
        "4",
        "--max-new-tokens",
        "12",
        "--batch-size",
        "3",
        "--data-dir",
        str(rolebench_data),
        "--output",
        str(out),
        "--no-progress",
    ]
    assert main(args) == 0
    results = read_results(out)
    general = results.results["rolebench_zh_general"].model_dump()
    assert general["n"] == general["n_generated"] == 4
    assert general["cus"] is not None and 0 <= general["cus"] <= 1 and general["cus_n"] == 4
    assert results.groups["rolebench_zh"].avg is not None
    config = results.config
    assert config.model["spec"] == f"hf:{tiny_model_dir}"
    assert config.generation["max_new_tokens"] == 12 and config.limit == 4
    assert config.prompt["system_role"] == "system" and config.prompt["chat_template_sha256"]
    records = [
        json.loads(line) for line in (out / "samples/rolebench_zh_specific.jsonl").read_text().splitlines()
    ]
    assert len(records) == 4
    assert all(isinstance(r["output"], str) for r in records)
    assert records[0]["messages"][0]["role"] == "system" and "你是" in records[0]["messages"][0]["content"]
    assert records[0]["messages"][-1]["content"] == records[0]["question"].strip()
    with RecordStore(out / "generations.sqlite", "generations") as store:
        stored = len(store)
    # the same command again: everything comes from the store, identical results
    capsys.readouterr()
    assert main(args) == 0
    again = read_results(out)
    with RecordStore(out / "generations.sqlite", "generations") as store:
        assert len(store) == stored
    assert again.results["rolebench_zh_general"].model_dump()["cus"] == general["cus"]
