"""Absurd values are refused in one line before any work: the bootstrap's resamples (at most lm-eval's
100,000), seeds (0 to 2**31 - 1, what every backend takes as that seed), an empty --output (which would be the
working directory). The same bounds for flags, config files, the Python API and `rolebench compare`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import rolebench
from model_adapters import GenerationConfig
from model_adapters.interface import MAX_SEED
from rolebench.cli.main import main
from rolebench.errors import ConfigError
from rolebench.run.definition import MAX_BOOTSTRAP, RunDefinition


def one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0 and len(lines) == 1 and "Traceback" not in err, err
    return code, lines[0]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--bootstrap", "1000000000"], f"--bootstrap 1000000000 must be at most {MAX_BOOTSTRAP}"),
        (["--seed", "-1"], "--seed -1 must be at least 0"),
        (["--seed", str(2**80)], f"--seed {2**80} must be at most {MAX_SEED}"),
        (["--limit", "3", "--limit-seed", "-1"], "--limit-seed -1 must be at least 0"),
        (["--output", ""], "--output '' must name a path, not be empty"),
        (["--output", "  "], "--output '  ' must name a path"),
    ],
)
def test_absurd_values_are_refused_in_one_line_before_any_work(
    flags, expected, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # an empty --output must not write here
    argv = ["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--no-progress"]
    code, line = one_line(capsys, [*argv, "--output", str(tmp_path / "out"), *flags])
    assert code == 2 and expected in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_config_file_has_the_same_bounds(tmp_path, capsys):
    config = tmp_path / "run.yaml"
    config.write_text("model: baseline:rolegpt\ntasks: rolebench_demo\nbootstrap: 1000000000\n")
    code, line = one_line(capsys, ["evaluate", "--config", str(config), "--output", str(tmp_path / "out")])
    assert code == 2 and f"must be at most {MAX_BOOTSTRAP}" in line and "run.yaml" in line


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"bootstrap": 10**9}, f"bootstrap 1000000000 must be at most {MAX_BOOTSTRAP}"),
        ({"seed": -1}, "seed -1 must be at least 0"),
        ({"seed": 2**80, "temperature": 1.0}, f"must be at most {MAX_SEED}"),
        ({"output": ""}, "output '' must name a path"),
    ],
)
def test_the_python_api_refuses_them_with_a_value_error(options, expected, tmp_path):
    options = {"output": tmp_path / "out", **options}
    with pytest.raises(ValueError, match="^") as caught:
        rolebench.evaluate("baseline:rolegpt", tasks="rolebench_demo", progress=False, **options)
    assert isinstance(caught.value, ConfigError) and expected in str(caught.value)


def test_the_bounds_themselves_are_allowed():
    RunDefinition(model="baseline:rolegpt", tasks=("rolebench_demo",), seed=MAX_SEED, bootstrap=MAX_BOOTSTRAP)
    assert GenerationConfig(seed=MAX_SEED).seed == MAX_SEED


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, 2**80])
def test_a_generation_config_refuses_a_seed_no_backend_takes(seed):
    with pytest.raises(
        ConfigError, match=rf"^seed .* is not allowed \(--seed\): use a whole number from 0 to {MAX_SEED}$"
    ):
        GenerationConfig(temperature=1.0, seed=seed)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bounds") / "run"
    argv = ["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo_specific", "--output"]
    assert main([*argv, str(out), "--no-progress", "--bootstrap", "20"]) == 0
    return out


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--bootstrap", "1000000000"], "--bootstrap 1000000000 is out of range"),
        (["--seed", "-1"], "--seed -1 is out of range"),
        (["--seed", str(2**80)], f"--seed {2**80} is out of range"),
    ],
)
def test_compare_has_the_same_bounds(flags, expected, run_dir, capsys):
    code, line = one_line(capsys, ["compare", str(run_dir), str(run_dir), *flags])
    assert code == 2 and expected in line and "give 0 to" in line


def test_compare_names_a_run_recorded_with_a_seed_out_of_range(run_dir, tmp_path, capsys):
    """A run of an older rolebench, which took --seed -1, is named with what to give instead."""
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["bootstrap"]["seed"] == 0
    results["config"]["bootstrap"]["seed"] = -1
    old = Path(shutil.copytree(run_dir, tmp_path / "old"))
    (old / "results.json").write_text(json.dumps(results), encoding="utf-8")
    code, line = one_line(capsys, ["compare", str(old), str(run_dir)])
    assert code == 2 and "--seed -1 is out of range" in line and "results.json" in line
    capsys.readouterr()
    assert main(["compare", str(old), str(run_dir), "--seed", "3"]) == 0
