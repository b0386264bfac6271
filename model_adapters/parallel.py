"""Data parallelism inside one model: `--model-args data_parallel=N` runs N replicas as Ray actors.

`ReplicaPool` is an adapter like any other (`load_model` returns one when `data_parallel > 1`): each
actor holds one replica of the backend (built with `data_parallel=1`); `generate` puts the requests
on a work queue of chunks, hands each idle replica the next chunk as one streaming call, and yields
every answer the moment it comes back, so the runner stores it at once and an interrupted run
resumes from what is stored. data_parallel is a transport option: the outputs, and so the cache
identity, are those of one process.

Greedy answers are identical to one process because a chunk is one of the batches the backend
itself would form (`adapter.batches(requests, config)` when the backend has it, e.g. `hf:`, whose
batch composition decides the padding; otherwise `batch_size` requests in order, for backends that
answer each request on its own). Sampled answers are seeded per request (`Request.seed`), so they
are those of one process too.

A replica that dies (killed, out of memory, its node lost) is restarted by Ray (`MAX_RESTARTS`);
its unfinished chunk goes back to the front of the queue at once for any replica (answers already
delivered are not delivered twice), and the restarted one rejoins when it answers a probe. When
every replica is gone the run stops with one line; everything answered is stored.

Ray: `$RAY_ADDRESS` (or the Ray this process is connected to, e.g. inside a `rolebench sweep` job)
is used; otherwise a private local Ray is started on 127.0.0.1 for the run
(`model_adapters.ray_runtime`). Each replica asks for one GPU when the backend would use one and the
cluster has GPUs (vLLM: tensor_parallel_size x pipeline_parallel_size), else a share of the CPUs;
`replica_resources(...)` overrides that (a sweep passes the model's resources).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ClassVar

from model_adapters.errors import ConfigError, ModelError, first_line
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request
from model_adapters.options import AdapterOptions
from model_adapters.ray_runtime import connect, disconnect, import_ray
from model_adapters.registry import backend
from model_adapters.replica import FEATURE, Replica, rebuilt_error
from model_adapters.spec import ModelSpec

MAX_RESTARTS = 2
PROBE_PAUSE_S = 0.2
_REPLICA_RESOURCES: ContextVar[dict[str, Any] | None] = ContextVar("replica_resources", default=None)


@contextmanager
def replica_resources(resources: dict[str, Any] | None) -> Iterator[None]:
    """Ray resources of each replica started inside this block (e.g. `{"num_gpus": 1, "num_cpus": 4}`)."""
    token = _REPLICA_RESOURCES.set(resources)
    try:
        yield
    finally:
        _REPLICA_RESOURCES.reset(token)


def gpus_per_replica(options: AdapterOptions) -> int:
    """How many GPUs one replica of a backend with these options would use (0: it runs on CPUs)."""
    values = options.model_dump()
    if "tensor_parallel_size" in values:  # vLLM
        return int(values["tensor_parallel_size"]) * int(values.get("pipeline_parallel_size") or 1)
    if "n_gpu_layers" in values:  # llama.cpp
        return 1 if values["n_gpu_layers"] else 0
    device = str(values.get("device", "auto")).lower()
    return 0 if device == "cpu" or device.startswith("mps") else 1


def default_resources(ray: Any, options: AdapterOptions, replicas: int) -> dict[str, Any]:
    """One GPU set per replica when the backend uses GPUs and the cluster has them, else a CPU share."""
    gpus = gpus_per_replica(options)
    if gpus and ray.cluster_resources().get("GPU", 0) >= gpus:
        return {"num_gpus": gpus, "num_cpus": 1}
    biggest = max((n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=1)
    total = ray.cluster_resources().get("CPU", 1)
    return {"num_cpus": max(1, int(min(total // replicas, biggest)))}


def check_fits(ray: Any, resources: dict[str, Any]) -> None:
    """One line, now, when no node of the cluster could ever host one replica (it would wait forever)."""
    wanted = {"CPU": resources.get("num_cpus", 1), "GPU": resources.get("num_gpus", 0)}
    wanted.update(resources.get("resources") or {})
    nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
    if not any(all(node.get(k, 0) >= v for k, v in wanted.items() if v) for node in nodes):
        raise ConfigError(
            f"no Ray node has {wanted} for one replica",
            where="--model-args data_parallel",
            fix="give the replicas fewer resources, or use a cluster that has them",
        )


class ReplicaPool(AdapterBase):
    """N replicas of one backend on Ray, behind the adapter interface (see the module docstring)."""

    request_meta_keys: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, cls: type[AdapterBase], spec: ModelSpec, options: AdapterOptions, replicas: int
    ) -> None:
        self.spec = str(spec)
        self.replicas_wanted = replicas
        self._owns_ray = connect(feature="data_parallel (--model-args data_parallel=N)")
        self.ray = import_ray(FEATURE)
        resources = _REPLICA_RESOURCES.get() or default_resources(self.ray, options, replicas)
        check_fits(self.ray, resources)
        actor = self.ray.remote(Replica).options(max_restarts=MAX_RESTARTS, max_task_retries=0, **resources)
        single = options.model_copy(update={"data_parallel": 1})
        self.replicas = [actor.remote(cls, spec, single) for _ in range(replicas)]
        self.ready: set[int] = set()
        self.dead: set[int] = set()
        self.places: dict[int, dict[str, Any]] = {}
        self.probes: dict[Any, int] = {self.replicas[i].ready.remote(): i for i in range(replicas)}
        try:
            while not self.ready:  # the model is loaded when at least one replica has it
                self._wait_probe(None)
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> ReplicaPool:
        return cls(backend(spec.scheme).load_class(), spec, options, int(options.data_parallel))

    # replicas coming and going -------------------------------------------------------------------

    def _wait_probe(self, timeout: float | None) -> None:
        """Wait for one readiness probe and settle it (a ready, restarting or dead replica)."""
        if not self.probes:
            raise ModelError(
                f"all {len(self.replicas)} replicas of {self.spec} failed",
                where="--model-args data_parallel",
                fix="see the Ray logs; every answer so far is stored: run the command again to resume",
            )
        done, _ = self.ray.wait(list(self.probes), num_returns=1, timeout=timeout)
        for ref in done:
            self._settle_probe(ref, self.probes.pop(ref))

    def _settle_probe(self, ref: Any, i: int) -> None:
        try:
            answer = self.ray.get(ref)
        except self.ray.exceptions.ActorDiedError:
            self.dead.add(i)
            return
        except self.ray.exceptions.RayActorError:  # still restarting: ask again shortly
            time.sleep(PROBE_PAUSE_S)
            self.probes[self.replicas[i].ready.remote()] = i
            return
        if answer["error"] is not None:
            self.close()
            raise rebuilt_error(*answer["error"])
        self.places[i] = answer
        self.ready.add(i)

    def _lost(self, i: int) -> None:
        """Replica `i` failed a call: it is restarting (probe it) or gone."""
        self.ready.discard(i)
        if i not in self.dead:
            self.probes[self.replicas[i].ready.remote()] = i

    # generation ------------------------------------------------------------------------------------

    def _plan(self, requests: Sequence[Request], config: GenerationConfig) -> list[list[int]]:
        while True:
            i = min(self.ready) if self.ready else None
            if i is None:
                self._wait_probe(None)
                continue
            try:
                plan: list[list[int]] = self.ray.get(self.replicas[i].plan.remote(list(requests), config))
                return plan
            except self.ray.exceptions.RayActorError:
                self._lost(i)

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        if not requests:
            return
        todo = collections.deque(self._plan(requests, config))
        delivered: set[int] = set()
        streams: dict[Any, tuple[int, list[int]]] = {}
        try:
            while todo or streams:
                for i in sorted(self.ready - {r for r, _ in streams.values()}):
                    if todo:
                        chunk = todo.popleft()
                        items = [(j, requests[j]) for j in chunk]
                        streams[self.replicas[i].generate.remote(items, config)] = (i, chunk)
                if not streams and not self.probes:
                    self._wait_probe(None)  # raises: no replica left
                done, _ = self.ray.wait([*streams, *self.probes], num_returns=1)
                for waitable in done:
                    if waitable in self.probes:
                        self._settle_probe(waitable, self.probes.pop(waitable))
                        continue
                    for j, generation in self._drain(waitable, streams, todo, delivered):
                        yield requests[j], generation
        finally:  # stopped early (an error, Ctrl-C, the runner's breaker): stop what is still running
            for stream in streams:
                try:
                    self.ray.cancel(stream)
                except Exception:  # noqa: BLE001 - it ended meanwhile
                    pass

    def _drain(
        self, stream: Any, streams: dict[Any, tuple[int, list[int]]], todo: Any, delivered: set[int]
    ) -> Iterator[tuple[int, Generation]]:
        """The next answer of one stream (none when it ended or its replica died)."""
        i, chunk = streams[stream]
        try:
            item = self.ray.get(next(stream))
        except StopIteration:
            del streams[stream]
            return
        except self.ray.exceptions.RayActorError:  # the replica died: its whole chunk goes back
            del streams[stream]
            todo.appendleft(chunk)  # the same batch again, so greedy answers stay identical
            self._lost(i)
            return
        except self.ray.exceptions.RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            raise ModelError(
                f"a replica of {self.spec} failed: {type(cause).__name__}: {first_line(cause)}",
                where="--model-args data_parallel",
            ) from None
        if item[0] == "error":
            raise rebuilt_error(item[1], item[2])
        j, generation = item
        if j not in delivered:
            delivered.add(j)
            yield j, generation

    # identity and lifetime ---------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        while True:
            if not self.ready:
                self._wait_probe(None)
                continue
            i = min(self.ready)
            try:
                info: dict[str, Any] = self.ray.get(self.replicas[i].info.remote())
                return info
            except self.ray.exceptions.RayActorError:
                self._lost(i)

    def where(self) -> list[dict[str, Any]]:
        """Where each ready replica runs (node, pid, GPUs)."""
        return [self.places[i] for i in sorted(self.ready)]

    def close(self) -> None:
        for replica in getattr(self, "replicas", []):
            try:
                self.ray.kill(replica)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.replicas = []
        if self._owns_ray:
            self._owns_ray = False
            disconnect()
