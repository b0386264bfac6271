"""Model files a user can fix (a weights file cut short or empty, a chat template that does not parse):
one line naming the file and what to do, exit 2, before any answer is generated; never an internal error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from model_adapters.files import damaged_weights, safetensors_damage
from rolebench.cli.main import main


def evaluate(capsys: pytest.CaptureFixture[str], model: Path, out: Path) -> tuple[int, str]:
    capsys.readouterr()
    argv = ["evaluate", "--model", f"hf:{model}", "--tasks", "rolebench_demo_specific", "--limit", "2"]
    code = main([*argv, "--output", str(out), "--no-progress"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("rolebench")]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return code, lines[0]


def copy(tiny_model_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_model_dir, tmp_path / "model"))


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        (0, "(empty)"),
        (5, "(5 bytes, shorter than a header)"),
        (1000, "(cut short: 1,000 bytes, its header alone announces"),
        (-100, "(cut short:"),  # the header intact, the last tensor's bytes missing
    ],
)
def test_a_damaged_safetensors_file_is_named_with_what_to_do(
    keep, expected, tiny_model_dir, tmp_path, capsys
):
    pytest.importorskip("transformers")
    model = copy(tiny_model_dir, tmp_path)
    weights = model / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:keep])
    code, line = evaluate(capsys, model, tmp_path / "out")
    assert code == 2, line
    assert (
        f"the weights file {weights} is damaged {expected}" in line
        and "download or save the model again" in line
    )
    assert not (tmp_path / "out/results.json").exists()


def test_intact_weights_are_not_called_damaged(tiny_model_dir):
    assert damaged_weights(str(tiny_model_dir)) == []
    assert safetensors_damage(tiny_model_dir / "model.safetensors") is None


def test_a_chat_template_that_does_not_parse_is_named_with_what_to_do(tiny_model_dir, tmp_path, capsys):
    pytest.importorskip("transformers")
    model = copy(tiny_model_dir, tmp_path)
    template = model / "chat_template.jinja"
    if not template.is_file():
        pytest.skip("this transformers saves the template inside tokenizer_config.json")
    template.write_text("{% for m in messages %}{{ m['content'] }", encoding="utf-8")
    code, line = evaluate(capsys, model, tmp_path / "out")
    assert code == 2, line
    assert f"the chat template in {template} is not a valid Jinja template: unexpected '}}' (line 1)" in line
    assert "correct the template" in line and "apply_chat_template=false" in line


def test_a_damaged_lora_adapter_is_named_too(tiny_model_dir, tiny_lora_dir, tmp_path, capsys):
    adapter = Path(shutil.copytree(tiny_lora_dir, tmp_path / "adapter"))
    weights = adapter / "adapter_model.safetensors"
    if not weights.is_file():
        pytest.skip("this peft saves the adapter in another format")
    weights.write_bytes(weights.read_bytes()[:-50])
    capsys.readouterr()
    argv = ["evaluate", "--model", f"peft:{tiny_model_dir}+{adapter}", "--tasks", "rolebench_demo_specific"]
    code = main([*argv, "--limit", "2", "--output", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("rolebench")]
    assert code == 2 and len(lines) == 1 and "internal error" not in err, err
    assert f"the weights file {weights} is damaged (cut short:" in lines[0], err
