"""RoCIT on the tiny random Llama: masking, a few steps that lower the loss, resume, the saved adapter
loading through `peft:` and the evaluation run right after training; the shipped configs validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rolebench.errors import ConfigError
from rolebench.recipes.training.config import shipped_configs
from rolebench.recipes.training.rocit.config import load_config

pytest.importorskip("peft")

ROWS = [
    {
        "role": "李白",
        "question": "请问你最喜欢的诗是哪一首？",
        "generated": ["天生我材必有用。", "我喜欢喝酒和写诗。"],
    },
    {"role": "李白", "question": "你是谁？", "generated": ["我是李白，我喜欢喝酒和写诗。"]},
    {"role": "孙悟空", "question": "你好", "generated": ["俺老孙来也！"]},
]
DESC = {"李白": "为人爽朗大方，乐于交友，爱好饮酒作诗", "孙悟空": "齐天大圣，神通广大。"}


def write_config(tmp_path: Path, model_dir: Path, **sections: dict) -> Path:
    data_dir = tmp_path / "data"
    (data_dir / "zh").mkdir(parents=True, exist_ok=True)
    (data_dir / "zh" / "train.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8"
    )
    (data_dir / "desc.json").write_text(json.dumps(DESC, ensure_ascii=False), encoding="utf-8")
    config = {
        "name": "tiny",
        "output_dir": str(tmp_path / "run"),
        "model": {"base": str(model_dir)},
        "data": {
            "data_dir": str(data_dir),
            "train_files": ["zh/train.jsonl"],
            "profiles": "desc.json",
            "language": "zh",
            "max_length": 256,
        },
        "lora": {"r": 8, "alpha": 16, "dropout": 0.0},
        "training": {
            "max_steps": 8,
            "learning_rate": 0.02,
            "batch_size": 4,
            "gradient_accumulation": 1,
            "save_every": 4,
            "warmup_ratio": 0.0,
            "seed": 0,
        },
        "evaluate": {"enabled": False},
    }
    for name, values in sections.items():
        config[name].update(values)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def test_prompt_tokens_are_masked_and_the_answer_ends_with_the_turn_end(tiny_model_dir, tmp_path):
    from transformers import AutoTokenizer

    from rolebench.prompts.roleplay import role_messages
    from rolebench.recipes.training.rocit.data import (
        IGNORE_INDEX,
        ChatRenderer,
        build_examples,
        encode,
        prepare_tokenizer,
    )

    config = load_config(str(write_config(tmp_path, tiny_model_dir)))
    tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir), config)
    messages = role_messages("李白", DESC["李白"], " 你是谁？ ", "zh")
    example, truncated = encode(ChatRenderer(tokenizer), messages, "我是李白。", 256)
    assert not truncated
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    n_prompt = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    assert example.labels[:n_prompt] == [IGNORE_INDEX] * n_prompt
    assert tokenizer.decode(example.labels[n_prompt:]).startswith("我是李白。<|im_end|>")
    examples, report = build_examples(config, tokenizer)
    assert len(examples) == report.examples == 4  # one example per `generated` answer


def run(config: Path, *extra: str) -> int:
    from rolebench.cli.main import main

    return main(["recipe", "rocit", str(config), "--no-progress", *extra])


def losses(run_dir: Path) -> list[float]:
    return [json.loads(line)["loss"] for line in (run_dir / "train_log.jsonl").read_text().splitlines()]


def test_rocit_lowers_the_loss_resumes_and_saves_a_loadable_adapter(tiny_model_dir, tmp_path):
    from model_adapters import GenerationConfig, Request, load_model

    config = write_config(tmp_path, tiny_model_dir)
    assert run(config, "--set", "training.max_steps=6") == 0
    run_dir = tmp_path / "run"
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["step-000004", "step-000006"]
    assert run(config) == 0  # same config, 8 steps: resumes at step 6
    logged = losses(run_dir)
    steps = [json.loads(line)["step"] for line in (run_dir / "train_log.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 9))
    assert sum(logged[-2:]) / 2 < sum(logged[:2]) / 2
    adapter = load_model(f"peft:{tiny_model_dir}+{run_dir / 'adapter'}")
    try:
        request = Request("r", [{"role": "user", "content": "你是谁？"}])
        [(_, generation)] = list(adapter.generate([request], GenerationConfig(max_new_tokens=4)))
        assert generation.text is not None and adapter.info()["adapter_sha256"]
    finally:
        adapter.close()
    summary = json.loads((run_dir / "train_summary.json").read_text())
    assert summary["steps"] == 8 and summary["last_loss"] == logged[-1]


def test_rocit_evaluates_the_adapter_and_the_base_right_after_training(tiny_model_dir, tmp_path):
    config = write_config(
        tmp_path,
        tiny_model_dir,
        training={"max_steps": 2},
        evaluate={
            "enabled": True,
            "tasks": ["rolebench_demo_specific"],
            "limit": 2,
            "max_new_tokens": 4,
            "include_base": True,
        },
    )
    assert run(config) == 0
    adapter_run = json.loads((tmp_path / "run" / "eval" / "step-2" / "results.json").read_text())
    base_run = json.loads((tmp_path / "run" / "eval-base" / "results.json").read_text())
    assert adapter_run["config"]["model"]["spec"].startswith(f"peft:{tiny_model_dir}+")
    assert base_run["config"]["model"]["spec"] == f"hf:{tiny_model_dir}"
    assert adapter_run["results"]["rolebench_demo_specific"]["n"] == 2


def test_a_changed_config_is_not_resumed_from_old_checkpoints(tiny_model_dir, tmp_path, capsys):
    config = write_config(tmp_path, tiny_model_dir, training={"max_steps": 4})
    assert run(config) == 0
    assert run(config, "--set", "training.learning_rate=0.5") == 2
    assert "written by a different config" in capsys.readouterr().err


@pytest.mark.parametrize("name", shipped_configs("rocit"))
def test_shipped_configs_validate(name):
    config = load_config(name)
    assert config.evaluate.tasks and config.data.train_files


def test_config_errors_name_the_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "name": "x",
                "output_dir": "o",
                "model": {"base": "b", "bogus": 1},
                "data": {"train_files": ["t"], "profiles": "p", "language": "zh"},
            }
        )
    )
    with pytest.raises(ConfigError, match="model.bogus"):
        load_config(str(bad))
    with pytest.raises(ConfigError, match="not found"):
        load_config("no-such-config")
    assert set(shipped_configs("rocit")) == {"rolellama", "roleglm", "smoke-cpu"}
    with pytest.raises(ConfigError, match="did you mean 'smoke-cpu'"):
        load_config("smoke-cp")


INST_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'assistant' %}{{ ' ' + m['content'] + eos_token }}"
    "{% else %}{{ '[INST] ' + m['content'] + ' [/INST]' }}{% endif %}{% endfor %}"
)


def test_a_config_chat_template_is_trained_with_and_travels_with_the_adapter(tiny_model_dir, tmp_path):
    from model_adapters import load_model

    config = write_config(
        tmp_path, tiny_model_dir, model={"chat_template": INST_TEMPLATE}, training={"max_steps": 1}
    )
    assert run(config) == 0
    adapter_dir = tmp_path / "run" / "adapter"
    assert (adapter_dir / "tokenizer_config.json").is_file()
    adapter = load_model(f"peft:{tiny_model_dir}+{adapter_dir}")
    try:
        assert adapter.render([{"role": "user", "content": "你是谁？"}]).startswith("[INST] ")
    finally:
        adapter.close()
