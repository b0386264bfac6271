"""What one sequence of a continuous batch (`model_adapters.llamacpp_batch`) is asked, holds and answers:
its prompt and sampling settings, its slot (cached tokens, the answer so far, the pending token), its
sampler chain (the one llama-cpp-python's `create_completion` builds), its answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model_adapters.llamacpp_gguf import GGUFModel


@dataclass(frozen=True)
class Sampling:
    max_tokens: int
    temperature: float = 0.0  # 0: greedy
    top_p: float = 1.0
    seed: int = 0
    repeat_penalty: float = 1.0
    penalty_last_n: int = 64  # llama-cpp-python's default window (Llama(last_n_tokens_size=64))


@dataclass(frozen=True)
class Prompt:
    index: int  # the caller's request number
    tokens: list[int]
    stop: tuple[bytes, ...] = ()  # UTF-8 stop strings: the answer ends before the first one
    seed: int | None = None  # this request's sampling seed (None: `Sampling.seed`)


@dataclass(frozen=True)
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int  # generated tokens, the end-of-generation token excluded: <= max_tokens
    finish_reason: str  # "stop" (end of generation or a stop string) | "length" (max_tokens reached)
    seconds: float  # admission to finish (wall clock, shared with the other sequences)


@dataclass
class Slot:
    seq_id: int
    sampler: Any = None
    prompt: Prompt | None = None  # None: free
    cached: list[int] = field(default_factory=list)  # tokens whose KV this sequence holds, from position 0
    generated: list[int] = field(default_factory=list)
    text: bytes = b""
    pending: int = -1  # sampled, not yet decoded
    row: int = -1  # this slot's logits row in the current batch
    started: float = 0.0

    @property
    def prefilling(self) -> bool:
        return self.prompt is not None and self.pending < 0

    @property
    def generating(self) -> bool:
        return self.prompt is not None and self.pending >= 0


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def new_sampler(model: GGUFModel, sampling: Sampling) -> Any:
    import llama_cpp as C

    chain = C.llama_sampler_chain_init(C.llama_sampler_chain_default_params())
    steps = [
        C.llama_sampler_init_penalties(
            model.n_vocab, sampling.penalty_last_n, sampling.repeat_penalty, 0.0, 0.0
        )
    ]
    if sampling.temperature > 0:
        steps += [
            C.llama_sampler_init_top_p(sampling.top_p, 1),
            C.llama_sampler_init_temp(sampling.temperature),
            C.llama_sampler_init_dist(sampling.seed),
        ]
    else:
        steps.append(C.llama_sampler_init_greedy())
    for step in steps:
        C.llama_sampler_chain_add(chain, step)
    return chain
