"""GRPO with RoleBench's reward on the tiny random Llama (CPU, 1-2 steps): the trained adapter, the
per-step length log, the before/after table, resuming, a PEFT start, and one line for bad configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rolebench.errors import ConfigError
from rolebench.recipes.training.config import shipped_configs
from rolebench.recipes.training.grpo.config import load_grpo_config

pytest.importorskip("trl")
pytest.importorskip("peft")

ROWS = [
    {
        "role": "李白",
        "question": "请问你最喜欢的诗是哪一首？",
        "generated": ["天生我材必有用。", "我喜欢喝酒和写诗。"],
    },
    {"role": "李白", "question": "你是谁？", "generated": ["我是李白，我喜欢喝酒和写诗。"]},
    {"role": "孙悟空", "question": "你好", "generated": ["俺老孙来也！"]},
    {"role": "孙悟空", "question": "你是谁？", "generated": ["俺老孙是齐天大圣！"]},
]
DESC = {"李白": "为人爽朗大方，乐于交友，爱好饮酒作诗", "孙悟空": "齐天大圣，神通广大。"}


def write_config(tmp_path: Path, model_dir: Path, **sections: dict) -> Path:
    """A GRPO config on a tiny Chinese train split (Hub layout under tmp_path/data), no evaluation."""
    data = tmp_path / "data"
    (data / "rolebench-zh" / "general").mkdir(parents=True, exist_ok=True)
    (data / "profiles-zh").mkdir(exist_ok=True)
    (data / "rolebench-zh" / "general" / "train.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8"
    )
    (data / "profiles-zh" / "desc.json").write_text(json.dumps(DESC, ensure_ascii=False), encoding="utf-8")
    config: dict = {
        "name": "tiny",
        "output_dir": str(tmp_path / "run"),
        "model": {"base": str(model_dir)},
        "data": {"data_dir": str(data), "splits": ["zh_general"]},
        "lora": {"r": 8, "alpha": 16, "dropout": 0.0},
        "grpo": {
            "max_steps": 2,
            "per_device_train_batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "learning_rate": 0.001,
            "bf16": False,
            "gradient_checkpointing": False,
            "save_steps": 1,
            "seed": 0,
        },
        "evaluate": {"enabled": False},
    }
    for name, values in sections.items():
        if values is None:
            config.pop(name, None)
        else:
            config.setdefault(name, {}).update(values)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def run(config: Path, *extra: str) -> int:
    from rolebench.cli.main import main

    return main(["recipe", "grpo", str(config), "--no-progress", *extra])


def log_lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "train_log.jsonl").read_text().splitlines()]


def test_grpo_trains_logs_lengths_and_prints_before_and_after(tiny_model_dir, tmp_path, capsys):
    from model_adapters import GenerationConfig, Request, load_model

    evaluate = {"enabled": True, "tasks": ["rolebench_demo_specific"], "limit": 2, "max_new_tokens": 4}
    assert run(write_config(tmp_path, tiny_model_dir, evaluate=evaluate)) == 0
    run_dir = tmp_path / "run"
    lines = log_lines(run_dir)
    assert [line["step"] for line in lines] == [1, 2]
    first = lines[0]
    assert first["completions"] == 4 and 0 <= first["reward_mean"] <= 1
    assert first["cut_share"] == 1.0 and first["length_inflated"]  # 8 random tokens never reach an end
    assert first["guard"] == "start-inflated"  # the start already breaks the rule: reported, not stopped
    out, err = capsys.readouterr()
    assert "the starting model's answers are already length-inflated" in err
    assert "trained 2 steps on 4 prompts: reward" in out
    for text in (
        "SPE recall",
        "SPE F",
        "| before",
        "| after",
        "answer len",
        "length-inflated: answers over 2x",
    ):
        assert text in out
    before = json.loads((run_dir / "eval-before" / "results.json").read_text())
    after = json.loads((run_dir / "eval" / "step-2" / "results.json").read_text())
    assert before["config"]["model"]["spec"] == f"hf:{tiny_model_dir}"
    assert after["config"]["model"]["spec"] == f"peft:{tiny_model_dir}+{(run_dir / 'adapter').resolve()}"
    adapter = load_model(f"peft:{tiny_model_dir}+{run_dir / 'adapter'}")
    try:
        [(_, answer)] = list(
            adapter.generate(
                [Request("r", [{"role": "user", "content": "你是谁？"}])], GenerationConfig(max_new_tokens=4)
            )
        )
        assert answer.text is not None
    finally:
        adapter.close()
    summary = json.loads((run_dir / "train_summary.json").read_text())
    assert summary["steps"] == 2 and summary["start"] == f"hf:{tiny_model_dir}"


def test_grpo_resumes_its_checkpoints_and_refuses_another_config(tiny_model_dir, tmp_path, capsys):
    config = write_config(tmp_path, tiny_model_dir)
    assert run(config, "--set", "grpo.max_steps=1") == 0
    assert run(config) == 0  # two steps: resumes after step 1
    assert [line["step"] for line in log_lines(tmp_path / "run")] == [1, 2]
    assert run(config, "--set", "grpo.learning_rate=0.5", "--set", "grpo.max_steps=3") == 2
    assert "written by a different config" in capsys.readouterr().err


def test_grpo_trains_a_peft_adapter_further_on_a_template_without_system_turns(
    tiny_model_dir, tiny_model_no_system_dir, tiny_lora_dir, tmp_path
):
    import torch
    from safetensors.torch import load_file

    config = write_config(tmp_path, tiny_model_dir, model={"adapter": str(tiny_lora_dir)}, lora=None)
    assert run(config, "--set", "grpo.max_steps=1") == 0
    saved = json.loads((tmp_path / "run" / "adapter" / "adapter_config.json").read_text())
    assert saved["r"] == 4  # the start's adapter, trained on (not a new one)
    start, trained = (
        load_file(p / "adapter_model.safetensors") for p in (tiny_lora_dir, tmp_path / "run" / "adapter")
    )
    assert start.keys() == trained.keys() and any(not torch.equal(start[k], trained[k]) for k in start)
    other = tmp_path / "nosys"
    other.mkdir()
    assert run(write_config(other, tiny_model_no_system_dir), "--set", "grpo.max_steps=1") == 0


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        (
            {"grpo": {"num_generation": 4}},
            "unknown GRPO setting grpo.num_generation.*did you mean 'num_generations'",
        ),
        ({"grpo": {"output_dir": "x"}}, "grpo.output_dir is set by the recipe"),
        ({"grpo": {"num_generations": 3}}, "invalid GRPO setting: .*num_generations"),
        ({"length_gaurd": {"action": "warn"}}, "length_gaurd: Extra inputs.*did you mean 'length_guard'"),
        (
            {"data": {"splits": ["zh_genral"]}},
            "data.splits: unknown RoleBench split.*did you mean 'zh_general'",
        ),
        ({"data": {"part": "test"}}, "data.part: test trains on the benchmark's test answers"),
        ({"data": {"elicitation": "zero_shot"}}, "data.elicitation: unknown elicitation.*'zero-shot'"),
        (
            {"reward": {"protocol": "rolelm"}},
            "reward.protocol: unknown scoring protocol.*did you mean 'rolellm'",
        ),
        ({"model": {"adapter": "x"}}, "a `lora` section with model.adapter"),
        ({"model": {"base": "/no/such/model"}}, "cannot load the start model"),
        ({"lora": {"target_modules": ["nope"]}}, "cannot add LoRA: .*nope.*lora.target_modules"),
    ],
)
def test_bad_configs_are_one_line_and_exit_2(tiny_model_dir, tmp_path, capsys, sections, message):
    import re

    assert run(write_config(tmp_path, tiny_model_dir, **sections)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("rolebench: error:")]  # beside library progress bars
    assert len(errors) == 1 and errors[0] == err[-1] and re.search(message, errors[0]), err


def test_grpo_trains_and_evaluates_under_a_few_shot_elicitation(tiny_model_dir, tmp_path):
    config = write_config(
        tmp_path,
        tiny_model_dir,
        data={"elicitation": "few-shot-dialogue", "shots": 1},
        evaluate={"enabled": True, "tasks": ["rolebench_demo_specific"], "limit": 1, "max_new_tokens": 2},
    )
    for role in DESC:  # the roles' scripts, where demonstrations come from (simple pair files)
        pair = {"question": "喝酒吗？", "answer": f"{role}来也！"}
        (tmp_path / "data" / "profiles-zh" / f"profiles-zh-{role}.jsonl").write_text(
            json.dumps(pair, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    assert run(config, "--set", "grpo.max_steps=1") == 0
    for folder in ("eval-before", "eval/step-1"):
        results = json.loads((tmp_path / "run" / folder / "results.json").read_text())
        assert results["config"]["elicitation"]["label"] == "few-shot-dialogue, 1 shot"  # as trained


def test_a_train_row_without_references_is_one_line_before_any_model_loads(tmp_path, capsys):
    config = write_config(tmp_path, tmp_path / "no-model-needed")
    train = tmp_path / "data" / "rolebench-zh" / "general" / "train.jsonl"
    train.write_text(
        train.read_text() + json.dumps({"role": "李白", "question": "你好"}, ensure_ascii=False) + "\n"
    )
    assert run(config) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "`generated`" in line and "train.jsonl:5" in line


@pytest.mark.parametrize("name", shipped_configs("grpo"))
def test_shipped_grpo_configs_validate(name):
    config, path = load_grpo_config(name)
    assert path.name == f"{name}.yaml" and config.evaluate.tasks and config.reward.protocol == "rolebench"
    assert config.length_guard.action == "stop" and config.evaluate.include_base


def test_shipped_configs_are_named_per_recipe():
    assert set(shipped_configs("grpo")) == {"grpo-smoke-cpu", "grpo-roleglm", "grpo-rolellama"}
    with pytest.raises(ConfigError, match="GRPO config smoke-cpu not found.*grpo-smoke-cpu"):
        load_grpo_config("smoke-cpu")  # a RoCIT config is not a GRPO one
