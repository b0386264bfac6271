"""The cache identity of a model: one rule for every store (generations, judgments, recipe calls).

Everything that can change an output is in it: the canonical spec (weights id and revision, adapter;
an API model's base URL is normalised and named as its `endpoint` by the backend's fingerprint), every
option that is not a transport setting (dtype, quantization, merge, ...) and the backend's fingerprint:
local weight, config, tokenizer and chat-template files, or the server an API model answers at.
Transport settings (timeouts, retries, threads, chunk sizes) are not: changing them never misses the
cache. Decoding settings and the exact messages are added per request by the store's user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model_adapters.loading import adapter_class, as_spec
from model_adapters.spec import ModelSpec


def model_identity(spec: str | ModelSpec, options: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of `spec` with `options` (validated here, so bad options fail before any loading)."""
    parsed = as_spec(spec)
    cls = adapter_class(parsed)
    validated = cls.Options.parse(options, f"{parsed.scheme}:")
    canonical = parsed.with_base_url(None) if "base_url" in validated.transport else parsed
    return {"spec": str(canonical), "options": validated.identity(), **cls.fingerprint(parsed, validated)}
