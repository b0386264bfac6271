"""One replica of a backend inside a Ray actor (`model_adapters.parallel.ReplicaPool` starts them): it loads
the backend with the CPUs Ray gave it, says what chunks the backend would form, and streams its answers; a
user error travels back as text (its class name and line) and is rebuilt on the pool's side."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from model_adapters.errors import ConfigError, MissingDependency, ModelError, UserError, first_line
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request
from model_adapters.options import AdapterOptions
from model_adapters.ray_runtime import import_ray
from model_adapters.spec import ModelSpec

FEATURE = "data_parallel"


def rebuilt_error(kind: str, line: str) -> UserError:
    """A user error a replica sent back as text (its class name and line), as one of the same family, its
    line unchanged."""
    cls: type[UserError] = {"ConfigError": ConfigError, "MissingDependency": MissingDependency}.get(
        kind, ModelError
    )
    error = cls.__new__(cls)
    UserError.__init__(error, line)
    return error


class Replica:
    """One replica of a backend, in a Ray actor (the pool wraps this class with `ray.remote`)."""

    def __init__(self, cls: type[AdapterBase], spec: ModelSpec, options: AdapterOptions) -> None:
        self.adapter: AdapterBase | None = None
        self.error: tuple[str, str] | None = None
        try:
            self.adapter = cls.from_spec(spec, self._threads(options))
        except UserError as exc:  # sent back as text: not every error class can be rebuilt from a pickle
            self.error = (type(exc).__name__, exc.line())
        except Exception as exc:  # noqa: BLE001 - reported by the pool in one line
            self.error = (
                "ModelError",
                f"a replica of {spec} could not load: {type(exc).__name__}: {first_line(exc)}",
            )

    @staticmethod
    def _threads(options: AdapterOptions) -> AdapterOptions:
        """llama.cpp's thread counts, when not given: the CPUs Ray gave this replica (torch reads
        OMP_NUM_THREADS, which Ray sets)."""
        ray = import_ray(FEATURE)
        cpus = int(ray.get_runtime_context().get_assigned_resources().get("CPU", 0)) or None
        names = [k for k in ("n_threads", "n_threads_batch") if k in type(options).model_fields]
        unset: dict[str, Any] = {k: cpus for k in names if getattr(options, k) is None}
        return options.model_copy(update=unset) if unset and cpus else options

    def ready(self) -> dict[str, Any]:
        from model_adapters.ray_runtime import where_am_i

        return {**where_am_i(), "error": self.error}

    def info(self) -> dict[str, Any]:
        return dict(self._loaded().info())

    def plan(self, requests: Sequence[Request], config: GenerationConfig) -> list[list[int]]:
        """The chunks: the backend's own batches when it says what they are, else `batch_size` in order."""
        batches = getattr(self._loaded(), "batches", None)
        if callable(batches):
            planned = [list(map(int, batch)) for batch in batches(requests, config)]
            if sorted(i for batch in planned for i in batch) == list(range(len(requests))):
                return planned
        size = max(1, config.batch_size)
        return [
            list(range(start, min(start + size, len(requests)))) for start in range(0, len(requests), size)
        ]

    def generate(
        self, items: Sequence[tuple[int, Request]], config: GenerationConfig
    ) -> Iterator[tuple[int, Generation] | tuple[str, str, str]]:
        """Yield `(index, generation)` per answer as the backend yields it; a user error as one tuple."""
        index = {id(request): i for i, request in items}
        try:
            for request, generation in self._loaded().generate([r for _, r in items], config):
                yield index[id(request)], generation
        except UserError as exc:
            yield ("error", type(exc).__name__, exc.line())

    def _loaded(self) -> AdapterBase:
        if self.adapter is None:
            raise RuntimeError("this replica did not load")
        return self.adapter
