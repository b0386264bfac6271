"""The one interface every model backend implements: chat conversations in, texts and usage out.

An adapter receives a batch of `Request`s (each a list of chat messages) and yields one
`Generation` per request, in any order, as soon as each is ready, so the caller can store it at
once. Backends sort, batch and parallelise as they like behind that.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, runtime_checkable

from model_adapters.errors import ConfigError
from model_adapters.files import tokenizer_fingerprint, weights_fingerprint
from model_adapters.options import AdapterOptions, NoOptions

if TYPE_CHECKING:
    from model_adapters.spec import ModelSpec

# every backend takes a seed from 0 to 2**31 - 1 as that seed: numpy's stop at 2**32 - 1, and llama.cpp's
# 2**32 - 1 (its LLAMA_DEFAULT_SEED) means a random one; vLLM's and OpenAI's are signed integers
MAX_SEED = 2**31 - 1
Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass(frozen=True)
class GenerationConfig:
    """Decoding settings shared by every backend; recorded in each result."""

    max_new_tokens: int = 512
    temperature: float = 0.0  # 0 means greedy
    top_p: float = 1.0
    seed: int = 0
    repetition_penalty: float = 1.0  # 1.0: none; above 1 discourages repeating earlier tokens
    batch_size: int = 8  # local backends: prompts per forward pass
    concurrency: int = 8  # API backends: requests in flight

    def __post_init__(self) -> None:
        """Refuse settings no backend can honour (one line each, before any model loads)."""
        checks = [
            ("max_new_tokens", self.max_new_tokens, self.max_new_tokens >= 1, "a whole number of at least 1"),
            (
                "temperature",
                self.temperature,
                math.isfinite(self.temperature) and self.temperature >= 0,
                "0 (greedy) or more",
            ),
            ("top_p", self.top_p, math.isfinite(self.top_p) and 0 < self.top_p <= 1, "in (0, 1]"),
            (
                "repetition_penalty",
                self.repetition_penalty,
                math.isfinite(self.repetition_penalty) and self.repetition_penalty > 0,
                "above 0 (1.0: none)",
            ),
            ("seed", self.seed, 0 <= self.seed <= MAX_SEED, f"a whole number from 0 to {MAX_SEED}"),
            ("batch_size", self.batch_size, self.batch_size >= 1, "at least 1"),
            ("concurrency", self.concurrency, self.concurrency >= 1, "at least 1"),
        ]
        for name, value, ok, allowed in checks:
            if not ok or isinstance(value, bool):
                raise ConfigError(
                    f"{name} {value!r} is not allowed",
                    where=f"--{name.replace('_', '-')}",
                    fix=f"use {allowed}",
                )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def decoding_key(self) -> dict[str, Any]:
        """The settings that change what is generated (batching and concurrency do not)."""
        return {k: v for k, v in self.as_dict().items() if k not in ("batch_size", "concurrency")}

    @property
    def samples(self) -> bool:
        """Whether decoding draws at random (temperature above 0; 0 is greedy and ignores every seed)."""
        return self.temperature > 0

    def seed_for(self, request: Request) -> int:
        """The seed of `request`'s draws: under sampling its own (`Request.seed`) when it has one, else
        these settings' `seed` (greedy decoding draws nothing: its requests are sent as they always were)."""
        return request.seed if self.samples and request.seed is not None else self.seed


def item_seed(seed: int, item: str) -> int:
    """The sampling seed of one item of a run: the first 31 bits of SHA-256 over the run's `seed` and the
    item's id. Items draw independently of each other (one run is many draws, not one draw of a run-wide
    random effect), and an item draws the same whatever else is asked with it, so a resumed run answers
    as an uninterrupted one. 31 bits: every backend takes it (llama.cpp's uint32, torch, vLLM, APIs)."""
    digest = hashlib.sha256(f"{seed}\x00{item}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class Request:
    """One conversation to complete. `meta` carries sample fields a special backend may need; such a
    backend names them in a class attribute `request_meta_keys`, so they enter its cache keys. `seed`:
    this request's own sampling seed (`item_seed`); None: the decoding settings' `seed`
    (`GenerationConfig.seed_for`)."""

    id: str
    messages: list[Message]
    meta: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Generation:
    """The answer to one request. `text` is None when the backend has no answer (see `error`)."""

    text: str | None
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    error: str | None = None
    finish_reason: str | None = None
    missing: bool = False  # no answer exists for this request (not a failure): e.g. a baseline without one

    @property
    def failed(self) -> bool:
        """The request failed (no answer, and one should exist): never stored, retried by the next run."""
        return self.text is None and not self.missing


@runtime_checkable
class ModelAdapter(Protocol):
    """What the runner and the judge need from a model."""

    spec: str

    def info(self) -> dict[str, Any]:
        """Identity for results and cache keys: at least `name` and `revision` (None if unknown)."""
        ...

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        """Yield `(request, generation)` for every request, each as soon as it is ready."""
        ...

    def close(self) -> None:
        """Release memory, processes or connections."""
        ...


class AdapterBase(ABC):
    """The class side of a backend: its options model, how it is built from a spec, its fingerprint.

    `Options` validates `--model-args`; `request_meta_keys` names the `Request.meta` fields the
    backend answers from (they enter its cache keys); `fingerprint` adds what identifies local
    weights (file sizes and modification times), so a changed checkpoint is never served stale;
    `preflight` checks what it needs from this machine (a key, a server) before any work.
    """

    Options: ClassVar[type[AdapterOptions]] = NoOptions
    request_meta_keys: ClassVar[tuple[str, ...]] = ()
    spec: str

    @classmethod
    @abstractmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> Self:
        """Build (load) the backend for a parsed spec and its validated options."""

    @classmethod
    def preflight(cls, spec: ModelSpec, options: Any) -> None:
        """Check, in seconds and without loading anything, what the backend will need from this machine
        (a key, a server that answers): one ConfigError / ModelError line now rather than after hours
        of other work. Nothing to check by default."""
        return None

    @classmethod
    def meta_keys(cls, spec: ModelSpec) -> tuple[str, ...]:
        """The `Request.meta` fields the answers of `spec` come from: `request_meta_keys` (a backend
        whose specs read different fields narrows them per spec)."""
        return tuple(cls.request_meta_keys)

    @classmethod
    def fingerprint(cls, spec: ModelSpec, options: Any) -> dict[str, Any]:
        """What identifies the model beyond the spec, computed without loading: by default the sizes and
        modification times of a local model folder's (or file's) weights and configs, and of its tokenizer
        files and chat templates; {} for a Hub id (its revision is in the spec)."""
        found = {"weights": weights_fingerprint(spec.name), "tokenizer": tokenizer_fingerprint(spec.name)}
        return {k: v for k, v in found.items() if v}

    @abstractmethod
    def info(self) -> dict[str, Any]:
        """Identity for results: at least `name` and `revision` (None if unknown)."""

    @abstractmethod
    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        """Yield `(request, generation)` for every request, each as soon as it is ready."""

    def close(self) -> None:
        """Release memory, processes or connections."""
        return None
