"""Model backends behind one spec string: `SCHEME:REST`, e.g. `hf:Qwen/Qwen2.5-0.5B-Instruct@main`.

The ground floor of the project: nothing here imports `rolebench`. The interface (`interface`),
the spec parser (`spec`), the backend table (`registry`), options (`options`), the cache identity
(`identity`) and chat helpers (`chat`) are shared; each backend is one module, imported only when
its scheme is used.
"""

from __future__ import annotations

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
    item_seed,
)
from model_adapters.loading import adapter_class, load_model, preflight, request_meta_keys
from model_adapters.registry import BACKENDS
from model_adapters.spec import ModelSpec

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
    "item_seed",
    "load_model",
    "model_identity",
    "preflight",
    "request_meta_keys",
]
