"""Model backends behind one spec string: `SCHEME:REST`, e.g. `hf:Qwen/Qwen2.5-0.5B-Instruct@main`.

The table below is the only registry: each entry names the module and class that implement a
scheme, imported only when chosen, so a backend's heavy SDK is never loaded unless used. A new
backend is one module plus one line here.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from model_adapters.interface import Generation, GenerationConfig, Message, ModelAdapter, Request, Usage
from rolebench.errors import ConfigError

# scheme -> ("module:Class", what the rest of the spec is)
ADAPTERS: dict[str, tuple[str, str]] = {
    "hf": ("model_adapters.hf:HFAdapter", "ID_OR_PATH[@REVISION]"),
    "peft": ("model_adapters.peft:PeftAdapter", "BASE+ADAPTER"),
    "openai": ("model_adapters.openai_api:OpenAIAdapter", "MODEL[@BASE_URL]"),
    "llamacpp": ("model_adapters.llamacpp:LlamaCppAdapter", "PATH_TO_GGUF | smollm2"),
    "smollm2": ("model_adapters.llamacpp:SmolLM2Adapter", "135m"),  # embedded SmolLM2-135M-Instruct GGUF
    "vllm": ("model_adapters.vllm:VLLMAdapter", "ID_OR_PATH[@REVISION]"),
    "lmeval": ("model_adapters.lmeval:LMEvalAdapter", "MODEL_NAME[,key=value...]"),
    "baseline": ("model_adapters.baseline:BaselineAdapter", "rolegpt"),
}


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `SCHEME:REST`; raise one clear error for an unknown or malformed spec."""
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigError(
            f"model spec {spec!r} has no scheme",
            where="--model",
            fix="write SCHEME:NAME, one of " + ", ".join(f"{s}:{r}" for s, (_, r) in ADAPTERS.items()),
        )
    if scheme not in ADAPTERS:
        close = difflib.get_close_matches(scheme, list(ADAPTERS), n=1)
        hint = f"did you mean {close[0]}:? " if close else ""
        raise ConfigError(
            f"unknown model scheme {scheme!r} in {spec!r}",
            where="--model",
            fix=hint + "known schemes: " + ", ".join(ADAPTERS),
        )
    return scheme, rest


def adapter_class(spec: str) -> type:
    """The class implementing a spec's scheme (its module is imported, the model is not loaded)."""
    scheme, _ = parse_spec(spec)
    module_name, _, class_name = ADAPTERS[scheme][0].partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def request_meta_keys(spec: str) -> tuple[str, ...]:
    """The `Request.meta` fields an adapter answers from (they belong in its cache keys)."""
    return tuple(getattr(adapter_class(spec), "request_meta_keys", ()))


def load_model(spec: str, **options: Any) -> ModelAdapter:
    """Build the adapter a spec names. `options` are backend settings (e.g. `dtype`, `base_url`)."""
    _, rest = parse_spec(spec)
    return adapter_class(spec).from_spec(rest, **options)


__all__ = [
    "ADAPTERS",
    "Generation",
    "GenerationConfig",
    "Message",
    "ModelAdapter",
    "Request",
    "Usage",
    "adapter_class",
    "load_model",
    "request_meta_keys",
    "parse_spec",
]
