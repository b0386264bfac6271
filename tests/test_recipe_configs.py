"""The training recipes' configs (`rolebench recipe rocit|grpo CONFIG`): every value is checked (types,
ranges, finiteness; the `grpo` section against TRL's own types; the evaluate section's tasks and model
options) before any model loads; YAML alias bombs are refused at once, by every reader of config files;
one interface for both recipes; a missing training library is named as such.

No model is loaded here: every config names a base that does not exist, so that a config passing its
checks would end in a different error (and nothing would be written before it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from rolebench.cli.main import main
from rolebench.errors import ConfigError
from rolebench.recipes.training.grpo.config import load_grpo_config
from rolebench.recipes.training.rocit.config import load_config
from rolebench.storage.yaml_files import MAX_NODES, load_yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
NO_MODEL = "/nonexistent/base-model"


def rocit_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "name": "tiny",
        "output_dir": str(tmp_path / "run"),
        "model": {"base": NO_MODEL},
        "data": {"train_files": ["zh/train.jsonl"], "profiles": "desc.json", "language": "zh"},
        "training": {"max_steps": 2, "learning_rate": 0.02},
        "evaluate": {"tasks": ["rolebench_zh"], "limit": 2, "include_base": True},
    }


def grpo_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "name": "tiny",
        "output_dir": str(tmp_path / "run"),
        "model": {"base": NO_MODEL},
        "data": {"splits": ["zh_general"], "limit": 2},
        "grpo": {"max_steps": 1, "num_generations": 2, "per_device_train_batch_size": 2, "bf16": False},
        "evaluate": {"tasks": ["rolebench_zh"], "limit": 2},
    }


def write(tmp_path: Path, config: dict[str, Any], name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("rolebench: error:")]
    assert len(errors) == 1 and errors[0] == err[-1] and "Traceback" not in "\n".join(err), err
    return errors[0]


ROCIT_CASES = [
    ("training.learning_rate=fast", r"training\.learning_rate: Input should be a valid number, not 'fast'"),
    ("training.learning_rate='1e-4'", r"training\.learning_rate: Input should be a valid number, not '1e-4'"),
    ("training.learning_rate=.nan", r"training\.learning_rate: Input should be a finite number"),
    ("training.learning_rate=-1", r"training\.learning_rate: Input should be greater than 0, not -1"),
    ("training.learning_rate=0", r"training\.learning_rate: Input should be greater than 0, not 0"),
    ("training.epochs=.inf", r"training\.epochs: Input should be a finite number"),
    ("training.mixed_precision=maybe", r"training\.mixed_precision: .*'no', 'bf16' or 'fp16', not 'maybe'"),
    ("training.gradient_checkpointing='no'", r"training\.gradient_checkpointing: .*valid boolean, not 'no'"),
    ("training.seed=-1", r"training\.seed: Input should be greater than or equal to 0"),
    ("data.max_rows_per_file=true", r"data\.max_rows_per_file: Input should be a valid integer, not True"),
    ("lora.target_modules=[]", r"lora\.target_modules"),
    ("name=''", r"invalid RoCIT config: name: String should have at least 1 character"),
    ("evaluate.enabled='yes'", r"evaluate\.enabled: Input should be a valid boolean, not 'yes'"),
    (
        "evaluate.tasks=[rolebench_zz]",
        r"evaluate\.tasks: unknown task 'rolebench_zz'.*did you mean 'rolebench_zh'",
    ),
    (
        "evaluate.model_options={dtyp: float32}",
        r"evaluate\.model_options: unknown option 'dtyp'.*did you mean dtype",
    ),
    ("evaluate.model_options={dtype: float99}", r"evaluate\.model_options: option dtype='float99'"),
]


@pytest.mark.parametrize(("override", "message"), ROCIT_CASES, ids=[c[0] for c in ROCIT_CASES])
def test_a_bad_rocit_value_is_one_line_before_anything_runs(tmp_path, capsys, override, message):
    config = write(tmp_path, rocit_config(tmp_path))
    assert main(["recipe", "rocit", str(config), "--set", override, "--no-progress"]) == 2
    line = one_error(capsys)
    assert re.search(message, line) and str(config) in line, line
    assert not (tmp_path / "run").exists()


GRPO_CASES = [
    ("grpo.learning_rate=-1", r"grpo\.learning_rate: -1 is out of range.*above 0"),
    ("grpo.learning_rate=0", r"grpo\.learning_rate: 0 is out of range"),
    ("grpo.learning_rate=.nan", r"grpo\.learning_rate: Input should be a finite number"),
    ("grpo.learning_rate=fast", r"grpo\.learning_rate: Input should be a valid number, not 'fast'"),
    ("grpo.num_generations=0", r"grpo\.num_generations: 0 is out of range.*2 or more"),
    ("grpo.beta=-1", r"grpo\.beta: -1 is out of range"),
    ("grpo.bf16=maybe", r"grpo\.bf16: Input should be a valid boolean, not 'maybe'"),
    ("grpo.max_steps=2.5", r"grpo\.max_steps: Input should be a valid integer, not 2\.5"),
    ("grpo.temperature=.inf", r"grpo\.temperature: Input should be a finite number"),
    ("grpo.num_generation=4", r"unknown GRPO setting grpo\.num_generation.*did you mean 'num_generations'"),
    ("data.seed=-1", r"data\.seed: Input should be greater than or equal to 0"),
    ("data.limit='3'", r"data\.limit: Input should be a valid integer, not '3'"),
    ("evaluate.tasks=[rolebench_zz]", r"evaluate\.tasks: unknown task 'rolebench_zz'"),
    ("evaluate.model_options={dtyp: x}", r"evaluate\.model_options: unknown option 'dtyp' for peft"),
    ("evaluate.max_new_tokens=0", r"evaluate: max_new_tokens 0 must be at least 1"),
]


@pytest.mark.parametrize(("override", "message"), GRPO_CASES, ids=[c[0] for c in GRPO_CASES])
def test_a_bad_grpo_value_is_one_line_before_anything_runs(tmp_path, capsys, override, message):
    pytest.importorskip("trl")
    config = write(tmp_path, grpo_config(tmp_path))
    assert main(["recipe", "grpo", str(config), "--set", override, "--no-progress"]) == 2
    line = one_error(capsys)
    assert re.search(message, line) and str(config) in line, line
    assert not (tmp_path / "run").exists()


def test_numbers_in_exponent_notation_are_numbers_and_anchors_within_the_bound_work(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(rocit_config(tmp_path)).replace("learning_rate: 0.02", "learning_rate: 2e-5"),
        encoding="utf-8",
    )
    assert load_config(str(path)).training.learning_rate == 2e-5  # YAML 1.1 would read the text "2e-5"
    document = load_yaml("base: &b {r: 4, alpha: 8}\nlora: {<<: *b, dropout: 0.0}\nlr: 1e-5\n", "x")
    assert document["lora"] == {"r": 4, "alpha": 8, "dropout": 0.0} and document["lr"] == 1e-5


BILLION_LAUGHS = "\n".join(
    [
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
        *(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi", strict=True)),
    ]
)


def bomb(tmp_path: Path, where: str) -> Path:
    """A billion-laughs document (9 levels of 9 aliases: 10^9 strings) whose `where` is the bomb."""
    path = tmp_path / "bomb.yaml"
    key, _, rest = where.partition(".")
    value = f"{{{rest}: *i}}" if rest else "*i"
    path.write_text(f"{BILLION_LAUGHS}\n{key}: {value}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["recipe", "grpo"], "data.splits"),
        (["recipe", "rocit"], "data.train_files"),
        (["evaluate", "--model", "baseline:question", "--config"], "tasks"),
        (["sweep", "--output", "out"], "models"),
    ],
    ids=["grpo", "rocit", "evaluate --config", "sweep"],
)
def test_a_yaml_bomb_is_refused_in_one_line_at_once(tmp_path, argv, where):
    done = subprocess.run(
        [sys.executable, "-m", "rolebench.cli", *argv, str(bomb(tmp_path, where))],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard, not a timing: today's reader never returns
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "refused YAML: its aliases expand it past" in done.stderr and "bomb.yaml" in done.stderr


def test_a_recursive_alias_and_a_deep_document_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="an alias refers to the node that holds it"):
        load_yaml("a: &a [1, *a]\n", "x.yaml")
    with pytest.raises(ConfigError, match="YAML nested too deeply"):
        load_yaml("a: " + "[" * 50_000 + "]" * 50_000, "x.yaml")
    big = "items: [" + ", ".join(["1"] * (MAX_NODES - 10)) + "]\n"  # written out, not aliased: read
    assert len(load_yaml(big, "x.yaml")["items"]) == MAX_NODES - 10


def test_task_and_judge_files_are_read_with_the_same_bound(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text(f"{BILLION_LAUGHS}\ntask: *i\n", encoding="utf-8")
    argv = ["evaluate", "--model", "baseline:question", "--tasks", "x", "--include-path", str(tasks)]
    assert main([*argv, "--output", str(tmp_path / "run")]) == 2
    assert "refused YAML" in one_error(capsys)
    judge = tmp_path / "judge.yaml"
    judge.write_text(f"{BILLION_LAUGHS}\nparser: *i\n", encoding="utf-8")
    from rolebench.judging.config import load_judge_config

    with pytest.raises(ConfigError, match="refused YAML"):
        load_judge_config(str(judge))


def test_both_recipes_take_config_as_a_positional_and_the_old_flag(tmp_path, capsys):
    raw = rocit_config(tmp_path)
    raw["evaluate"]["tasks"] = ["rolebench_zz"]  # refused after reading: shows which file was read
    config = write(tmp_path, raw)
    for argv in (["recipe", "rocit", str(config)], ["recipe", "rocit", "--config", str(config)]):
        assert main([*argv, "--no-progress"]) == 2
        assert "unknown task 'rolebench_zz'" in one_error(capsys)
    assert main(["recipe", "rocit", "--no-progress"]) == 2
    assert "no config given (CONFIG)" in one_error(capsys)
    assert main(["recipe", "rocit", str(config), "--config", "smoke-cpu"]) == 2
    assert "two configs given" in one_error(capsys)
    for recipe in ("rocit", "grpo"):
        with pytest.raises(SystemExit):
            main(["recipe", recipe, "--help"])
        usage = capsys.readouterr().out
        assert "CONFIG" in usage and "--config" not in usage


@pytest.mark.parametrize(("recipe", "blocked"), [("rocit", "torch"), ("grpo", "torch"), ("grpo", "trl")])
def test_a_missing_training_library_is_the_install_line(tmp_path, recipe, blocked):
    raw = rocit_config(tmp_path) if recipe == "rocit" else grpo_config(tmp_path)
    raw["evaluate"] = {"enabled": False}
    config = write(tmp_path, raw)
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules[{blocked!r}] = None  # `import {blocked}` fails as it does where it is not installed
        from rolebench.cli.main import main
        sys.exit(main(["recipe", {recipe!r}, {str(config)!r}, "--no-progress"]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert f"rolebench recipe {recipe} needs" in done.stderr and blocked in done.stderr
    assert 'pip install "rolebench[train]"' in done.stderr and "internal error" not in done.stderr
    assert not (tmp_path / "run").exists()


def test_shipped_configs_pass_the_stricter_checks():
    pytest.importorskip("trl")
    assert load_config("smoke-cpu").training.learning_rate == 2e-3
    config, _ = load_grpo_config("grpo-smoke-cpu")
    assert json.loads(json.dumps(config.grpo))["learning_rate"] == 5e-5
