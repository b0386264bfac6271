"""A local Ray for the Ray tests (one per session, 2 CPUs, every process on 127.0.0.1), a loopback
multi-node cluster, and fake backends.

Import `ray_cluster` (the fixture) and `fakes` into a test module. Ray workers are separate processes:
the fake backends are registered in each of them by Ray's `worker_process_setup_hook`, and in the
test process by the function-scoped `fakes` fixture (removed again after each test). Nothing here
reaches anything but 127.0.0.1.

`loopback_cluster(nodes)` starts a Ray cluster of several nodes on this machine (each node its own
raylet, every process on 127.0.0.1) that the test process does not join, so that a test can kill a
node; `python -m tests.ray_cluster ADDRESS ARGS...` is a `rolebench` driver for it (the command line
`rolebench ARGS...`, with the fake backends registered in the cluster's workers).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request, Usage
from model_adapters.options import AdapterOptions
from model_adapters.registry import BACKENDS, Backend
from model_adapters.spec import ModelSpec

REPO_ROOT = Path(__file__).resolve().parent.parent
FAKES = {
    "slowecho": Backend("slowecho", f"{__name__}:SlowEcho", "name", "slowecho:NAME"),
    "broken": Backend("broken", f"{__name__}:Broken", "name", "broken:NAME"),
}


class SlowEchoOptions(AdapterOptions):
    transport: ClassVar[frozenset[str]] = frozenset({"delay", "log", "data_parallel"})
    delay: float = 0.0
    log: str | None = None  # a file: one JSON line per generate call (pid, request ids)
    data_parallel: int = 1


class SlowEcho(AdapterBase):
    """A deterministic fake model: the answer is a digest of its name and the question, after `delay` s."""

    Options = SlowEchoOptions

    def __init__(self, name: str, options: SlowEchoOptions) -> None:
        self.spec, self.name, self.options = f"slowecho:{name}", name, options

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> SlowEcho:
        return cls(spec.name, options)

    def info(self) -> dict[str, Any]:
        return {"name": f"SlowEcho {self.name}", "revision": None}

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        if self.options.log:
            with open(self.options.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"pid": os.getpid(), "ids": [r.id for r in requests]}) + "\n")
        for request in requests:
            time.sleep(self.options.delay)
            question = request.messages[-1]["content"]
            digest = hashlib.sha256(f"{self.name}|{question}".encode()).hexdigest()[:12]
            yield (
                request,
                Generation(text=f"{self.name} says {digest}", usage=Usage(10, 3), finish_reason="stop"),
            )


class Broken(SlowEcho):
    """A model that cannot load (not a user error: Ray retries it)."""

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> SlowEcho:
        raise RuntimeError(f"boom: {spec} cannot load")


def register_fakes() -> None:
    """Ray's worker_process_setup_hook: the fake backends in every worker."""
    for scheme, entry in FAKES.items():
        BACKENDS.setdefault(scheme, entry)


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    for scheme, entry in FAKES.items():
        monkeypatch.setitem(BACKENDS, scheme, entry)


def log_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[dict[str, Any]]:
    """A local Ray with 2 CPUs for the whole session (started once: it takes 10 to 20 s here)."""
    from model_adapters.ray_runtime import connect, disconnect, prepare_environment, ray_available

    if not ray_available():
        pytest.skip("ray is not installed: pip install 'rolebench[ray]'")
    os.environ.pop("RAY_ADDRESS", None)  # never a cluster elsewhere
    prepare_environment(local=True)  # before `import ray`: loopback only, no usage statistics
    import ray

    if ray.is_initialized():  # another test module's copy of this fixture started it
        yield {"address": ray.get_runtime_context().gcs_address}
        return
    # the workers import the fakes from `tests` (a local Ray's workers inherit this environment)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    started = connect(
        num_cpus=2, num_gpus=0, runtime_env={"worker_process_setup_hook": f"{__name__}.register_fakes"}
    )
    try:
        yield {"address": ray.get_runtime_context().gcs_address}
    finally:
        if started:
            disconnect()


def _repo_on_pythonpath() -> None:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        dict.fromkeys(filter(None, [str(REPO_ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]))
    )


@contextmanager
def loopback_cluster(nodes: int = 2, cpus: int = 1) -> Iterator[Any]:
    """A Ray cluster of `nodes` nodes (`cpus` CPUs each) on 127.0.0.1 that this process does not join:
    `ray.cluster_utils.Cluster` (its `address`, `head_node`, `worker_nodes`, `remove_node(node)`)."""
    from model_adapters.ray_runtime import prepare_environment, ray_available

    if not ray_available():
        pytest.skip("ray is not installed: pip install 'rolebench[ray]'")
    prepare_environment(local=True)  # the nodes' processes inherit it: loopback, no usage statistics
    _repo_on_pythonpath()  # their workers import the fakes from `tests`
    from ray.cluster_utils import Cluster

    temp_dir = tempfile.mkdtemp(prefix="rbc", dir="/tmp")  # unix socket paths must stay < 108 bytes
    node = {"num_cpus": cpus, "node_ip_address": "127.0.0.1", "object_store_memory": 80 * 1024**2}
    try:
        with own_ray_tmpdir(temp_dir):
            cluster = Cluster(
                initialize_head=True,
                connect=False,
                head_node_args={**node, "include_dashboard": False, "temp_dir": temp_dir},
            )
            try:
                for _ in range(nodes - 1):
                    cluster.add_node(**node)
                cluster.wait_for_nodes()
                yield cluster
            finally:
                cluster.shutdown()
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)


@contextmanager
def own_ray_tmpdir(temp_dir: str) -> Iterator[None]:
    """Ray's default temp folder ($RAY_TMPDIR/ray) inside `temp_dir` while the block runs.

    `Cluster` writes the head's address into `ray_current_cluster` in Ray's default temp folder
    ($RAY_TMPDIR/ray, else $TMPDIR/ray, else /tmp/ray), a folder it never creates: on a machine where
    Ray never ran that is a FileNotFoundError, and on any other it points `ray.init(address="auto")`
    of every process of the machine at this short-lived cluster (and races other test sessions)."""
    (Path(temp_dir) / "ray").mkdir(exist_ok=True)
    before = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = temp_dir
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = before


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_ray_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without any Ray address or authentication setting, HOME at `home` (so that
    `~/.ray/auth_token` is only what a test puts there), the checkout on PYTHONPATH, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    return {**env, **extra}


@contextmanager
def ray_start_head(env: dict[str, str], cpus: int = 1) -> Iterator[str]:
    """A one-node cluster started the usual way (`ray start --head --block`, on 127.0.0.1, in
    `env`: no `RAY_AUTH_MODE` there and no token means no token authentication, Ray's default for
    `ray start`); yields its address. Stopped by signalling its own process group, never `ray stop`
    (which stops every Ray of this user)."""
    from model_adapters.ray_runtime import ray_available

    if not ray_available():
        pytest.skip("ray is not installed: pip install 'rolebench[ray]'")
    temp_dir = tempfile.mkdtemp(prefix="rbs", dir="/tmp")  # unix socket paths must stay < 108 bytes
    (Path(temp_dir) / "ray").mkdir()
    port = free_port()
    ray = Path(sys.executable).with_name("ray")
    command = [str(ray), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1"]
    command += [f"--num-cpus={cpus}", "--include-dashboard=false", f"--temp-dir={temp_dir}"]
    head = subprocess.Popen(
        command,
        env={**env, "RAY_TMPDIR": temp_dir},  # its address file stays out of /tmp/ray
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 120  # a limit against a hang only
        while not list(Path(temp_dir).glob("session_latest/logs/raylet.out")) or not _listening(port):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"`ray start --head` did not come up (exit {head.poll()})")
            time.sleep(0.5)
        yield address
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def node_of(cluster: Any, node_id: str) -> Any:
    """The cluster's node (head or worker) with this Ray node id."""
    return next(n for n in [cluster.head_node, *cluster.worker_nodes] if n.node_id == node_id)


def driver(address: str, argv: Sequence[str]) -> int:
    """`rolebench ARGV` as a driver of the cluster at `address`, the fakes registered in its workers."""
    from model_adapters.ray_runtime import NAMESPACE, prepare_environment, worker_env

    prepare_environment(local=True)
    import ray

    runtime_env = {"worker_process_setup_hook": "tests.ray_cluster.register_fakes", "env_vars": worker_env()}
    ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, runtime_env=runtime_env)
    register_fakes()
    from rolebench.cli.main import main

    return main(list(argv))


if __name__ == "__main__":
    sys.exit(driver(sys.argv[1], sys.argv[2:]))
