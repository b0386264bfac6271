"""How rolebench starts or joins Ray: quiet, loopback only when local, and only when something needs it.

`connect(address)` joins a cluster (`address`, else `$RAY_ADDRESS`) or, without one, starts a private
local Ray bound to 127.0.0.1; a process already connected (a Ray worker, a test session) keeps its
connection. `disconnect()` stops only a Ray this process started. Used by the data-parallel replica
pool (`model_adapters.parallel`) and by `rolebench sweep`.

A local Ray must be told before `import ray` to stay on loopback and send nothing anywhere:
- `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`: Ray's local mode. On Linux Ray otherwise turns 127.0.0.1
  into the machine's routable address and its servers listen on every interface;
- `RAY_USAGE_STATS_ENABLED=0` and a report URL on a closed loopback port: usage statistics are on
  by default and posted to usage-stats.ray.io (even with the dashboard off);
- `RAY_AUTH_MODE=token`: the default of a new local Ray, said explicitly (silences a warning).
A driver joining a real multi-node cluster must advertise a routable address: then only usage
statistics are turned off. A driver joining a cluster (loopback or not) follows the cluster's own
authentication mode unless `RAY_AUTH_MODE` says otherwise: `cluster_auth_mode` asks the cluster's GCS
without a token, and only a cluster that refuses that is joined with this machine's token
(`RAY_AUTH_TOKEN`, `RAY_AUTH_TOKEN_PATH` or `~/.ray/auth_token`), so a token never goes to a cluster
that does not ask for one. `ray` is an optional dependency (`pip install "rolebench[ray]"`).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from model_adapters.errors import MissingDependency

LOOPBACK_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/",
}
OWN_RAY_AUTH = {"RAY_AUTH_MODE": "token"}  # a private local Ray: token, Ray's default for a new one
QUIET_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/"}
# What every worker of a cluster must see (a local Ray's workers inherit the driver's environment; a
# `ray start` node's workers have that shell's). Never a secret: a runtime_env is stored in the cluster
# and shown by `ray list jobs`; nodes need API keys in their own environment. Never
# CUDA_VISIBLE_DEVICES: Ray assigns GPUs per task.
FORWARD_ENV = (
    "HF_HOME",
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "ROLEBENCH_DATA",
    "ROLEBENCH_CACHE",
    "OPENAI_BASE_URL",
)
LOCAL_OBJECT_STORE_BYTES = 256 * 1024**2  # answers are small; Ray's minimum is about 75 MB
NAMESPACE = "rolebench"

_started: dict[str, Any] = {}  # the local Ray this process started: {"temp_dir": ...}


def ray_available() -> bool:
    return "ray" in sys.modules or importlib.util.find_spec("ray") is not None


def require_ray(feature: str) -> None:
    """MissingDependency (one line: what to install) when ray is not installed."""
    if not ray_available():
        raise MissingDependency(feature, "ray", "ray")


def is_loopback(address: str | None) -> bool:
    """Whether an address names this machine's loopback (a cluster started here with `ray start`)."""
    if address is None:
        return True
    host = address.removeprefix("ray://").rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def prepare_environment(local: bool, *, joining: bool = False) -> None:
    """Set the variables Ray reads (at import, or when it starts its processes) for a quiet, local Ray.

    `joining`: this process joins a cluster started elsewhere, whose authentication mode it follows
    (`connect`), so it leaves `RAY_AUTH_MODE` alone."""
    imported = "ray" in sys.modules  # by another library: what Ray read at import cannot change
    env = LOOPBACK_ENV if local else QUIET_ENV
    if local and not joining and not imported:  # the driver must agree with the servers it starts
        env = {**env, **OWN_RAY_AUTH}
    for name, value in env.items():
        os.environ.setdefault(name, value)
    if local and imported:
        try:
            from ray._private import ray_constants

            ray_constants.ENABLE_RAY_CLUSTER = False
        except (ImportError, AttributeError):  # pragma: no cover - a Ray without that switch
            pass


def import_ray(feature: str) -> Any:
    require_ray(feature)
    import ray

    return ray


def worker_env() -> dict[str, str]:
    return {name: os.environ[name] for name in FORWARD_ENV if name in os.environ}


def connect(
    address: str | None = None,
    *,
    feature: str = "Ray",
    num_cpus: int | None = None,
    num_gpus: int | None = None,
    runtime_env: dict[str, Any] | None = None,
) -> bool:
    """Be connected to Ray; True when this call started a local Ray (then `disconnect()` stops it).

    `address` (else `$RAY_ADDRESS`) joins that cluster; without one a private local Ray is started,
    every process bound to 127.0.0.1, with `num_cpus`/`num_gpus` (default: what this machine has).
    """
    address = address or os.environ.get("RAY_ADDRESS") or None
    prepare_environment(local=is_loopback(address), joining=address is not None)
    ray = import_ray(feature)
    if ray.is_initialized():
        return False
    if address is not None:
        follow_auth_mode(address)
    kwargs: dict[str, Any] = {
        "log_to_driver": False,  # workers log into the session's files, not onto the progress bar
        "logging_level": logging.WARNING,
        "namespace": NAMESPACE,
    }
    if address is None:
        temp_dir = tempfile.mkdtemp(prefix="rb", dir="/tmp")  # unix socket paths must stay < 108 bytes
        kwargs.update(
            address="local",
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            object_store_memory=LOCAL_OBJECT_STORE_BYTES,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            _temp_dir=temp_dir,
        )
        if runtime_env:
            kwargs["runtime_env"] = runtime_env
        _started["temp_dir"] = temp_dir
        atexit.register(disconnect)  # a process that ends without disconnect() leaves no temp dir
    else:
        kwargs.update(address=address, runtime_env={"env_vars": worker_env(), **(runtime_env or {})})
    try:
        ray.init(**kwargs)
    except Exception:
        _forget_local()
        raise
    return address is None


def cluster_auth_mode(address: str, timeout_ms: int = 10_000) -> str | None:
    """'token' or 'disabled': what the cluster's GCS at `address` (HOST:PORT) asks of a client, learnt
    by a call that carries no token; None when it cannot be asked (a `ray://` or `auto` address, a
    Ray without token authentication, a GCS that does not answer: `ray.init` then says why)."""
    if address.startswith("ray://") or address == "auto" or ":" not in address:
        return None
    try:
        raylet: Any = importlib.import_module("ray._raylet")
        standalone = raylet.InnerGcsClient.standalone
    except (ImportError, AttributeError):  # pragma: no cover - a Ray without token authentication
        return None
    before = os.environ.get("RAY_AUTH_MODE")
    _set_auth_mode("disabled")  # this call sends no token, whatever this machine holds
    try:
        with _quiet_stderr():  # Ray's C++ client logs the refusal it is asked to get
            standalone(address, None, timeout_ms)
    except Exception as exc:  # noqa: BLE001 - Ray's own exception types; only the refusal is an answer
        return "token" if type(exc).__name__ == "AuthenticationError" else None
    finally:
        _set_auth_mode(before)
    return "disabled"


def follow_auth_mode(address: str) -> None:
    """Join the cluster at `address` in its own authentication mode (`RAY_AUTH_MODE` set by the user wins)."""
    if not os.environ.get("RAY_AUTH_MODE"):
        mode = cluster_auth_mode(address)
        if mode is not None:
            _set_auth_mode(mode)


def _set_auth_mode(mode: str | None) -> None:
    """`RAY_AUTH_MODE` for this process (None: unset), and Ray's cached config told (as Ray does itself)."""
    if mode is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = mode
    importlib.import_module("ray._raylet").Config.initialize("")


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def disconnect() -> None:
    """Stop the local Ray this process started (a joined cluster or an inherited connection is left alone)."""
    if "temp_dir" not in _started:
        return
    import ray

    try:
        ray.shutdown()
    finally:
        _forget_local()


def _forget_local() -> None:
    temp_dir = _started.pop("temp_dir", None)
    if temp_dir:
        shutil.rmtree(temp_dir, ignore_errors=True)


def where_am_i() -> dict[str, Any]:
    """The Ray node, worker process and GPUs of the calling task or actor (for records and logs)."""
    ray = import_ray("Ray")
    context = ray.get_runtime_context()
    return {
        "node_id": context.get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),
        "hostname": os.uname().nodename,
        "pid": os.getpid(),
        "gpus": [str(g) for g in context.get_accelerator_ids().get("GPU", [])],
    }
