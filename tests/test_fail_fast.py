"""What can never succeed fails at once, in one line, before any work: a host name that does not resolve,
a Hub that does not answer (or offline mode) for an `hf://` data location, a judge without its API key or
whose local server is not running, a Ray cluster that refuses this machine's token.

Nothing here needs a network: the `.invalid` top-level domain never resolves (RFC 2606), a closed port
on 127.0.0.1 stands for a server (or Hub) that is not there, and a real OpenAI-compatible server and Ray
cluster run on 127.0.0.1.
"""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from model_adapters import GenerationConfig, Request, load_model, preflight
from rolebench.cli.main import main
from rolebench.data.resolve import resolve_source
from rolebench.errors import ConfigError, DataError, ModelError
from tests.fake_openai import fake_openai  # noqa: F401 - a fixture

REPO_ROOT = Path(__file__).resolve().parent.parent

NOWHERE = "rolebench-test.invalid"  # RFC 2606: a name that never resolves


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ask(adapter: object) -> None:
    request = Request(id="q", messages=[{"role": "user", "content": "Who are you?"}])
    list(adapter.generate([request], GenerationConfig()))  # type: ignore[attr-defined]


# --- a host name that does not resolve --------------------------------------------------------------------


def test_a_host_name_that_does_not_resolve_fails_at_once_naming_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    caplog.set_level(logging.WARNING)
    adapter = load_model(f"openai:gpt-x@http://{NOWHERE}:8000/v1", backoff=0.0, max_retries=6)
    try:
        with pytest.raises(ModelError) as caught:
            ask(adapter)
    finally:
        adapter.close()
    line = str(caught.value)
    assert f"the host name {NOWHERE} does not resolve" in line and "\n" not in line
    assert "retry" not in caplog.text  # not one retry: waiting does not make a name exist


def test_a_refused_local_port_keeps_its_short_retries(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    adapter = load_model(f"openai:gpt-x@http://127.0.0.1:{closed_port()}/v1", backoff=0.0, max_retries=2)
    try:
        with pytest.raises(ModelError, match="cannot reach the server after 3 attempts"):
            ask(adapter)
    finally:
        adapter.close()
    assert caplog.text.count("retry ") == 2  # a server starting up may answer the next attempt


# --- the judge's pre-flight: its key, its local server ----------------------------------------------------


def test_preflight_checks_the_key_and_a_local_server_without_loading(
    fake_openai, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="environment variable OPENAI_API_KEY is not set"):
        preflight("openai:gpt-4o-mini")
    with pytest.raises(ConfigError, match="MY_KEY is not set"):
        preflight(f"openai:gpt-4o-mini@https://{NOWHERE}/v1", api_key_env="MY_KEY")
    port = closed_port()
    with pytest.raises(ModelError, match=f"nothing answers at http://127.0.0.1:{port}/v1") as caught:
        preflight(f"openai:judge@http://127.0.0.1:{port}")
    assert "start the server" in str(caught.value)
    server = fake_openai(lambda body: "never asked")
    preflight(f"openai:judge@{server.base_url}")  # a local server needs no key, and it answers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    preflight(f"openai:gpt-4o-mini@https://{NOWHERE}/v1")  # a remote server is not contacted
    assert server.count() == 0  # a connection, never a request
    preflight("baseline:rolegpt")  # other backends have nothing to check


def test_evaluate_with_a_judge_without_its_key_generates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    argv = ["evaluate", "--model", "baseline:question", "--tasks", "rolebench_demo", "--limit", "3"]
    code = main([*argv, "--output", str(out), "--no-progress", "--judge", "openai:gpt-4o-mini"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert "OPENAI_API_KEY is not set" in err and "--judge" in err
    assert not out.exists()  # refused before the first answer


def test_judge_refuses_a_local_judge_server_that_is_not_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["evaluate", "--model", "baseline:question", "--tasks", "rolebench_demo", "--limit", "3"]
    assert main([*argv, "--output", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    port = closed_port()
    code = main(["judge", str(run), "--judge", f"openai:judge@http://127.0.0.1:{port}/v1", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert f"nothing answers at http://127.0.0.1:{port}/v1" in err and "start the server" in err
    assert not (run / "judgments").exists()


# --- an hf:// data location without a Hub -----------------------------------------------------------------


def test_an_hf_location_in_offline_mode_fails_at_once_saying_so(caplog: pytest.LogCaptureFixture) -> None:
    from huggingface_hub import constants

    assert constants.HF_HUB_OFFLINE  # tests/conftest.py: HF_HUB_OFFLINE=1
    caplog.set_level(logging.WARNING)
    with pytest.raises(DataError) as caught:
        resolve_source("hf://rolebench-org/RoleBench@v1.0")
    line = str(caught.value)
    assert "Hub offline mode is on (HF_HUB_OFFLINE)" in line and "unset HF_HUB_OFFLINE" in line
    assert "not in the local Hub cache" in line and "hf://datasets/rolebench-org/RoleBench@v1.0" in line


def test_an_hf_location_without_a_network_is_probed_once_and_fails_at_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """No Hub at the endpoint (a closed port): one probe, offline mode on, the cache only, one line; not
    huggingface_hub's retries with back-off (about 25 s without a network)."""
    from huggingface_hub import constants

    from model_adapters import network

    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(network, "_switched", {})
    caplog.set_level(logging.WARNING)
    with pytest.raises(DataError) as caught:
        resolve_source("hf://rolebench-org/RoleBench@v1.0")
    line = str(caught.value)
    assert f"the Hub ({endpoint}) does not answer" in line and "connect to the network" in line
    assert "thrown while requesting" not in caplog.text  # huggingface_hub never retried
    assert constants.HF_HUB_OFFLINE and os.environ["HF_HUB_OFFLINE"] == "1"  # the rest of the run: cache only


# --- a Ray cluster that refuses this machine's token ------------------------------------------------------


@contextmanager
def ray_head(env: dict[str, str]) -> Iterator[str]:
    """A one-node Ray cluster on 127.0.0.1 (`ray start --head --block` in its own temp folder and process
    group, all of it ended at exit); its address."""
    pytest.importorskip("ray", reason="needs ray (pip install 'rolebench[ray]')")
    port, temp_dir = closed_port(), tempfile.mkdtemp(prefix="rbt", dir="/tmp")  # socket paths < 108 bytes
    command = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", "--port", str(port)]
    command += ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--include-dashboard", "false"]
    command += ["--temp-dir", temp_dir, "--disable-usage-stats"]
    head = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert head.stdout is not None
        for line in head.stdout:  # up once it says so (its output then ends only with the process)
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail(f"ray start --head exited with {head.wait()}")
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=60)
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_a_ray_cluster_refusing_the_token_is_one_line(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("models: [baseline:question]\ntasks: [rolebench_demo]\nlimit: 2\n")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_AUTH_MODE="token", RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_TOKEN="c" * 32)
    with ray_head(env) as address:
        done = subprocess.run(
            [sys.executable, "-m", "rolebench.cli", "sweep", str(sweep), "--output", str(tmp_path / "out")]
            + ["--ray-address", address, "--no-progress"],
            cwd=REPO_ROOT,
            # another token than the cluster's; Ray's own retries 1 s, not 20
            env={**env, "RAY_AUTH_TOKEN": "0" * 32, "RAY_NUM_REDIS_GET_RETRIES": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )
    lines = [line for line in done.stderr.splitlines() if line.startswith("rolebench")]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert "refused this client's token" in lines[0] and "RAY_AUTH_TOKEN" in lines[0], lines[0]
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "0" * 32 not in done.stderr


def test_ray_refusing_a_token_anywhere_is_the_same_line() -> None:
    """The same line when Ray raises its AuthenticationError itself (any call, not only ray.init)."""
    exceptions = pytest.importorskip("ray.exceptions", reason="needs ray (pip install 'rolebench[ray]')")
    from rolebench.cli.failures import describe

    line, code = describe(exceptions.AuthenticationError("RPC error: InvalidAuthToken: token is incorrect"))
    assert code == 2 and line.startswith("the Ray cluster refused this client's token")


@pytest.mark.parametrize("path", ["./typo", "../no-such-model", "/no/such/model"])
def test_a_local_model_path_that_does_not_exist_is_named_so(tmp_path, capsys, monkeypatch, path):
    """`hf:./typo` is a local folder that is not there, not a Hub id the network cannot reach (issue 36)."""
    pytest.importorskip("transformers")
    from rolebench.cli.main import main

    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "evaluate",
            "--model",
            f"hf:{path}",
            "--tasks",
            "rolebench_demo",
            "--limit",
            "1",
            "--no-progress",
            "--output",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    assert f"cannot load the tokenizer of {path!r}: no such folder" in err[0]
    assert "Hub cannot be reached" not in err[0] and "hf:ORG/NAME" in err[0]
