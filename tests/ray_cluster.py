"""A local Ray for the Ray tests (one per session, 2 CPUs, every process on 127.0.0.1) and fake backends.

Import `ray_cluster` (the fixture) and `fakes` into a test module. Ray workers are separate processes:
the fake backends are registered in each of them by Ray's `worker_process_setup_hook`, and in the
test process by the function-scoped `fakes` fixture (removed again after each test). Nothing here
reaches anything but 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
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
