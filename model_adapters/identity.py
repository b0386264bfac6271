"""The cache identity of a model: one rule for every store (generations, judgments, recipe calls).

Everything that can change an output is in it: the canonical spec (weights id and revision, adapter,
base URL excepted), every option that is not a transport setting (dtype, quantization, merge, ...)
and the backend's fingerprint of local weight files. Transport settings (timeouts, retries,
threads, chunk sizes, the URL of the same model) are not: changing them never misses the cache.
Decoding settings and the exact messages are added per request by the store's user.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
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


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def identity_key(identity: Mapping[str, Any]) -> str:
    """A short hex digest of an identity (for file names and logs)."""
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def files_fingerprint(paths: Iterable[Path]) -> dict[str, list[int]]:
    """`{name: [size, mtime_ns]}` of local files: cheap, and it changes whenever a file is replaced."""
    found: dict[str, list[int]] = {}
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        found[path.name] = [stat.st_size, stat.st_mtime_ns]
    return dict(sorted(found.items()))


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def weights_fingerprint(location: str) -> dict[str, list[int]]:
    """The fingerprint of a local model folder's weights and configs, or of a local file; {} for a Hub id."""
    path = Path(location).expanduser()
    if path.is_file():
        return files_fingerprint([path])
    if not path.is_dir():
        return {}
    wanted = [
        p
        for p in path.iterdir()
        if p.is_file() and (p.suffix in WEIGHT_SUFFIXES or p.name.endswith("config.json"))
    ]
    return files_fingerprint(wanted)
