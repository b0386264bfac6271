"""From a spec to a backend: its class (imported on demand), its validated options, the loaded adapter."""

from __future__ import annotations

from typing import Any

from model_adapters.errors import ConfigError
from model_adapters.interface import AdapterBase
from model_adapters.registry import backend
from model_adapters.spec import ModelSpec


def as_spec(spec: str | ModelSpec) -> ModelSpec:
    return spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)


def adapter_class(spec: str | ModelSpec) -> type[AdapterBase]:
    """The class implementing a spec's scheme (its module is imported, the model is not loaded)."""
    scheme = as_spec(spec).scheme
    cls = backend(scheme).load_class()
    if not issubclass(cls, AdapterBase):
        raise TypeError(f"the backend of {scheme}: is not an AdapterBase subclass")
    return cls


def request_meta_keys(spec: str | ModelSpec) -> tuple[str, ...]:
    """The `Request.meta` fields a backend answers from (they belong in its cache keys)."""
    parsed = as_spec(spec)
    return adapter_class(parsed).meta_keys(parsed)


def preflight(spec: str | ModelSpec, **options: Any) -> None:
    """Check a spec, its options and what its backend needs from this machine (an API key, a local
    server that answers) without loading the model: one ConfigError / ModelError line for what is wrong.
    Run it before work whose end needs the model (e.g. a judge after hours of generation)."""
    parsed = as_spec(spec)
    cls = adapter_class(parsed)
    cls.preflight(parsed, cls.Options.parse(options, f"{parsed.scheme}:"))


def load_model(spec: str | ModelSpec, **options: Any) -> AdapterBase:
    """Build the adapter a spec names. `options` are backend settings (e.g. `dtype`, `base_url`).

    A backend with the `data_parallel` option given N > 1 becomes N replicas on Ray behind one adapter
    (`model_adapters.parallel.ReplicaPool`); the same outputs, so the same cache identity."""
    parsed = as_spec(spec)
    cls = adapter_class(parsed)
    validated = cls.Options.parse(options, f"{parsed.scheme}:")
    replicas = int(getattr(validated, "data_parallel", 1))
    if replicas < 1:
        raise ConfigError(
            f"option data_parallel={replicas} for {parsed.scheme}: models is not allowed",
            where="--model-args",
            fix="use data_parallel=1 (one process) or more (replicas on Ray)",
        )
    if replicas > 1:
        from model_adapters.parallel import ReplicaPool

        return ReplicaPool(cls, parsed, validated, replicas)
    return cls.from_spec(parsed, validated)
