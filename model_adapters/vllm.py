"""`vllm:ID_OR_PATH[@REVISION]`: a model served in-process by vLLM (GPU), through `LLM.chat`.

vLLM applies the model's chat template itself (`add_generation_prompt=True`) and batches
continuously; requests are submitted `chunk_size` at a time so answers reach the store as each
chunk finishes. A template that rejects or drops a system turn gets the system text merged into
the first user turn (`info()["system_role"]`). Decoding: `SamplingParams(temperature, top_p,
max_tokens, seed)`, under sampling one per request with the request's own seed
(`GenerationConfig.seed_for`); temperature 0 is greedy; no top-k or penalties; EOS is the only stop.

Options (`--model-args`): `tensor_parallel_size` (1), `pipeline_parallel_size` (1), `dtype` (auto),
`gpu_memory_utilization` (0.9), `max_model_len` (the model's), `quantization`, `trust_remote_code`
(false), `enforce_eager` (false), `chunk_size` (256 conversations per `LLM.chat` call),
`distributed_executor_backend` (auto|mp|ray|uni), `data_parallel` (1; N replicas on Ray, see
`model_adapters.parallel`).

Parallelism: tensor_parallel_size x pipeline_parallel_size GPUs serve one model. `auto` lets vLLM run
them as processes on this machine (`mp`) when it has that many GPUs, and through Ray (`ray`: the
GPUs of several nodes of the Ray cluster at `$RAY_ADDRESS`) when it has fewer, or when this process
already runs inside Ray (a `rolebench sweep` job). The parallel sizes stay in the cache identity
(tensor parallelism changes the order of reductions); the executor and data_parallel do not.
Not tested on GPUs here (the project's CI has none): only option handling is.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from pydantic import Field, field_validator

from model_adapters.chat import merge_system, probe_system_role, text_sha256
from model_adapters.errors import MissingDependency, ModelError, first_line
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request, Usage
from model_adapters.options import AdapterOptions
from model_adapters.ray_runtime import connect, disconnect
from model_adapters.spec import ModelSpec

EXECUTORS = ("auto", "mp", "ray", "uni")


class VLLMOptions(AdapterOptions):
    transport: ClassVar[frozenset[str]] = frozenset(
        {"gpu_memory_utilization", "chunk_size", "distributed_executor_backend", "data_parallel"}
    )

    tensor_parallel_size: int = Field(1, ge=1)
    pipeline_parallel_size: int = Field(1, ge=1)
    dtype: str = "auto"
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    quantization: str | None = None
    trust_remote_code: bool = False
    enforce_eager: bool = False
    chunk_size: int = Field(256, ge=1)
    distributed_executor_backend: str = "auto"
    data_parallel: int = Field(1, ge=1)

    @field_validator("distributed_executor_backend")
    @classmethod
    def _known_executor(cls, value: str) -> str:
        if value.lower() not in EXECUTORS:
            raise ValueError("use distributed_executor_backend=" + "|".join(EXECUTORS))
        return value.lower()

    @property
    def world_size(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size


def import_vllm() -> Any:
    try:
        import vllm
    except ImportError:
        raise MissingDependency("vllm: models", "vllm (and a CUDA GPU)", "vllm") from None
    return vllm


def executor_backend(options: VLLMOptions) -> str | None:
    """vLLM's `distributed_executor_backend`: as given; for `auto`, None (one GPU, or vLLM's own processes
    over this process's GPUs) unless the model needs more GPUs than this process sees (inside a Ray task:
    the GPUs Ray gave it): then "ray", which places vLLM's workers on the GPUs of the cluster's nodes."""
    if options.distributed_executor_backend != "auto":
        return options.distributed_executor_backend
    if options.world_size == 1:
        return None
    try:
        import torch

        visible = int(torch.cuda.device_count())
    except ImportError:  # pragma: no cover - vLLM depends on torch
        visible = 0
    return "ray" if options.world_size > visible else None


def engine_arguments(options: VLLMOptions) -> dict[str, Any]:
    """The keyword arguments of `vllm.LLM` for these options (ours left out, None values left out)."""
    ours = {"chunk_size", "data_parallel", "distributed_executor_backend"}
    arguments = {k: v for k, v in options.model_dump().items() if k not in ours and v is not None}
    backend = executor_backend(options)
    if backend is not None:
        arguments["distributed_executor_backend"] = backend
    return arguments


class VLLMAdapter(AdapterBase):
    """vllm.LLM behind the ModelAdapter protocol."""

    Options: ClassVar[type[AdapterOptions]] = VLLMOptions

    def __init__(self, name: str, revision: str | None = None, options: VLLMOptions | None = None) -> None:
        self.name, self.revision = name, revision
        self.options = options or VLLMOptions()
        self.spec = f"vllm:{name}" + (f"@{revision}" if revision else "")
        self.vllm = import_vllm()
        engine_args = engine_arguments(self.options)
        # vLLM on Ray joins $RAY_ADDRESS, or a local Ray started here on loopback (not vLLM's own ray.init)
        self._owns_ray = engine_args.get("distributed_executor_backend") == "ray" and connect(
            feature="vllm: with distributed_executor_backend=ray"
        )
        try:
            self.llm = self.vllm.LLM(
                model=name, revision=revision, tokenizer_revision=revision, **engine_args
            )
        except (OSError, ValueError, RuntimeError) as error:
            raise ModelError(
                f"vLLM cannot load {name!r}: {first_line(error)}",
                where="--model",
                fix="check the id, revision and --model-args (GPU memory, tensor_parallel_size)",
            ) from None
        tokenizer = self.llm.get_tokenizer()
        self.chat_template = getattr(tokenizer, "chat_template", None)
        self.system_role = probe_system_role(
            lambda messages: tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        )

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> VLLMAdapter:
        return cls(spec.name, spec.revision, options)

    def _sampling_params(self, config: GenerationConfig, seed: int) -> Any:
        sampling = config.temperature > 0
        return self.vllm.SamplingParams(
            n=1,
            temperature=config.temperature if sampling else 0.0,
            top_p=config.top_p if sampling else 1.0,
            max_tokens=config.max_new_tokens,
            seed=seed,
        )

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        shared = self._sampling_params(config, config.seed)
        size = self.options.chunk_size
        for start in range(0, len(requests), size):
            chunk = list(requests[start : start + size])
            conversations = [
                merge_system(r.messages) if self.system_role == "merged" else list(r.messages) for r in chunk
            ]
            params = (
                [self._sampling_params(config, config.seed_for(r)) for r in chunk]
                if config.samples
                else shared
            )
            started = time.perf_counter()
            outputs = self.llm.chat(
                messages=conversations, sampling_params=params, use_tqdm=False, add_generation_prompt=True
            )
            seconds = (time.perf_counter() - started) / len(chunk)
            for request, output in zip(chunk, outputs, strict=True):
                completion = output.outputs[0]
                usage = Usage(
                    prompt_tokens=len(output.prompt_token_ids or []),
                    completion_tokens=len(completion.token_ids),
                )
                yield (
                    request,
                    Generation(
                        text=completion.text,
                        usage=usage,
                        seconds=seconds,
                        finish_reason=completion.finish_reason,
                    ),
                )

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "revision": self.revision,
            "backend": "vllm",
            "vllm": getattr(self.vllm, "__version__", None),
            "dtype": self.options.dtype,
            "tensor_parallel_size": self.options.tensor_parallel_size,
            "pipeline_parallel_size": self.options.pipeline_parallel_size,
            "system_role": self.system_role,
            "chat_template_sha256": text_sha256(self.chat_template),
        }

    def close(self) -> None:
        self.llm = None
        import gc

        gc.collect()
        if getattr(self, "_owns_ray", False):
            self._owns_ray = False
            disconnect()
