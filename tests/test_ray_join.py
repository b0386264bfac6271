"""Joining a Ray cluster started the usual way (`ray start --head`): rolebench follows the cluster's
own authentication mode. A cluster without token authentication (Ray's default for `ray start` on a
machine without a token) is joined without one; a cluster with a token is joined with this machine's
token, and without one the refusal is one line. Each test starts its own cluster in a HOME of its own
(so `~/.ray/auth_token` is only what the test puts there) and runs `rolebench sweep` as a user would.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rolebench.run.folder import read_results
from tests.ray_cluster import REPO_ROOT, clean_ray_env, ray_start_head


def _sweep(tmp_path: Path, address: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(exist_ok=True)
    file = tmp_path / "sweep.yaml"
    file.write_text(yaml.safe_dump({"models": ["baseline:rolegpt"], "tasks": ["rolebench_demo_specific"]}))
    command = [sys.executable, "-m", "rolebench.cli", "sweep", str(file), "--output", str(tmp_path / "out")]
    return subprocess.run(
        [*command, "--ray-address", address, "--no-progress"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow  # a `ray start` cluster and three fresh processes: 1 to 2 minutes on 2 busy cores
def test_a_cluster_started_with_ray_start_and_no_token_is_joined_without_one(tmp_path, tiny_model_dir):
    """By `rolebench sweep --ray-address`, and by data parallelism through $RAY_ADDRESS."""
    home = tmp_path / "home"
    home.mkdir()
    env = clean_ray_env(home)
    with ray_start_head(env, cpus=2) as address:
        swept = _sweep(tmp_path, address, env)
        model = f"hf:{tiny_model_dir}"
        argv = ["evaluate", "--model", model, "--model-args", "device=cpu,data_parallel=2", "--limit", "3"]
        argv += [
            "--tasks",
            "rolebench_demo_specific",
            "--max-new-tokens",
            "4",
            "--output",
            str(tmp_path / "dp"),
        ]
        parallel = subprocess.run(
            [sys.executable, "-m", "rolebench.cli", *argv, "--no-progress"],
            cwd=REPO_ROOT,
            env={**env, "RAY_ADDRESS": address},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert swept.returncode == 0, swept.stderr
    assert read_results(tmp_path / "out/baseline_rolegpt").results["rolebench_demo_specific"].n_generated > 0
    assert parallel.returncode == 0, parallel.stderr
    assert read_results(tmp_path / "dp").results["rolebench_demo_specific"].n_generated == 3
    assert not (home / ".ray/auth_token").exists()  # joining made no token either


@pytest.mark.slow
def test_a_cluster_with_a_token_is_joined_with_it_and_without_it_refused_in_one_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    token = secrets.token_hex(32)
    with ray_start_head(clean_ray_env(home, RAY_AUTH_TOKEN=token)) as address:
        refused = _sweep(tmp_path / "without", address, clean_ray_env(home))
        joined = _sweep(tmp_path, address, clean_ray_env(home, RAY_AUTH_TOKEN=token))
    assert joined.returncode == 0, joined.stderr
    assert read_results(tmp_path / "out/baseline_rolegpt").results["rolebench_demo_specific"].n_generated > 0
    lines = [line for line in refused.stderr.splitlines() if line.startswith("rolebench")]
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert len(lines) == 1 and "token" in lines[0] and "RAY_AUTH_TOKEN" in lines[0], refused.stderr
    assert token not in refused.stderr + joined.stderr + joined.stdout
