"""Model backends behind one spec string: `SCHEME:REST`, e.g. `hf:Qwen/Qwen2.5-0.5B-Instruct@main`.

The ground floor of the project: nothing here imports `rolebench`. The interface (`interface`),
the spec parser (`spec`), the backend table (`registry`), options (`options`), the cache identity
(`identity`) and chat helpers (`chat`) are shared; each backend is one module, imported only when
its scheme is used.
"""

from __future__ import annotations

from typing import Any

from model_adapters.errors import ConfigError, MissingDependency, ModelError, UserError
from model_adapters.identity import model_identity
from model_adapters.interface import (
    AdapterBase,
    Generation,
    GenerationConfig,
    Message,
    ModelAdapter,
    Request,
    Usage,
)
from model_adapters.registry import BACKENDS, backend
from model_adapters.spec import ModelSpec


def adapter_class(spec: str | ModelSpec) -> type[AdapterBase]:
    """The class implementing a spec's scheme (its module is imported, the model is not loaded)."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    return backend(parsed.scheme).load_class()


def request_meta_keys(spec: str | ModelSpec) -> tuple[str, ...]:
    """The `Request.meta` fields a backend answers from (they belong in its cache keys)."""
    return tuple(adapter_class(spec).request_meta_keys)


def load_model(spec: str | ModelSpec, **options: Any) -> AdapterBase:
    """Build the adapter a spec names. `options` are backend settings (e.g. `dtype`, `base_url`)."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    cls = backend(parsed.scheme).load_class()
    return cls.from_spec(parsed, cls.Options.parse(options, f"{parsed.scheme}:"))


__all__ = [
    "BACKENDS",
    "AdapterBase",
    "ConfigError",
    "Generation",
    "GenerationConfig",
    "Message",
    "MissingDependency",
    "ModelAdapter",
    "ModelError",
    "ModelSpec",
    "Request",
    "Usage",
    "UserError",
    "adapter_class",
    "load_model",
    "model_identity",
    "request_meta_keys",
]
