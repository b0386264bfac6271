"""`hf:ID_OR_PATH[@REVISION]`: a transformers causal LM, batched, with its own chat template.

Prompts are rendered with the tokenizer's chat template (`add_generation_prompt=True`) and encoded
without extra special tokens (the template carries them). A template that rejects (or silently
drops) a system turn gets the system text merged into the first user turn (`model_adapters.chat.
merge_system`); `info()["system_role"]` says which. A tokenizer with no chat template (a base
model), or `apply_chat_template=false`, gets plain text: the turns joined by a blank line.

Requests are sorted by prompt length (longest first, so a too-large batch fails at once), left
padded and generated `batch_size` at a time; each batch's answers are yielded as soon as it
finishes. Decoding is exactly what GenerationConfig says: greedy when `temperature == 0`, else
sampling with `temperature`/`top_p`, each row with its request's own seed (`GenerationConfig.seed_for`,
`model_adapters.row_sampling`: an answer does not depend on its batch); the model's own generation defaults
(repetition penalty, top-k, sampling) are overridden, and EOS is the only stop.

Options (`--model-args key=value,...`): `dtype=auto|float32|float16|bfloat16`,
`device=auto|cpu|cuda|cuda:N|mps` (auto: all visible GPUs via accelerate, else the CPU),
`gguf_file=NAME.gguf` (a GGUF file inside the folder/repo; `hf:PATH/TO/FILE.gguf` works too),
`apply_chat_template=true|false`, `trust_remote_code=false|true`, `attn_implementation=...`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from model_adapters.chat import merge_system, plain_prompt, probe_system_role, text_sha256
from model_adapters.errors import ConfigError, ModelError
from model_adapters.hf_generation import (
    answers,
    decoding_config,
    generate_tokens,
    input_device,
    length_batches,
)
from model_adapters.hf_identity import loaded_digests
from model_adapters.hf_loading import (
    device_kwargs,
    files_at_fault,
    import_transformers,
    load_error,
    template_source,
)
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Message, Request
from model_adapters.network import offline
from model_adapters.options import AdapterOptions
from model_adapters.row_sampling import RowSampler
from model_adapters.spec import ModelSpec

DTYPES = ("auto", "float32", "float16", "bfloat16")
_DTYPE_ALIASES = {
    "fp32": "float32",
    "float": "float32",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
}


class HFOptions(AdapterOptions):
    """Backend options of `hf:` (and `peft:`) specs."""

    transport: ClassVar[frozenset[str]] = frozenset({"data_parallel"})

    dtype: str = "auto"
    device: str = "auto"
    gguf_file: str | None = None
    apply_chat_template: bool = True
    trust_remote_code: bool = False
    attn_implementation: str | None = None
    data_parallel: int = Field(1, ge=1)  # N replicas on Ray (model_adapters.parallel); same outputs

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        dtype = _DTYPE_ALIASES.get(value.lower(), value.lower())
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {value!r}: use dtype=" + "|".join(DTYPES))
        return dtype


class HFAdapter(AdapterBase):
    """A transformers causal LM behind the ModelAdapter protocol."""

    scheme = "hf"
    backend = "transformers"
    Options: ClassVar[type[AdapterOptions]] = HFOptions

    def __init__(
        self,
        name: str,
        revision: str | None = None,
        options: HFOptions | None = None,
        *,
        loaded: tuple[Any, Any] | None = None,
    ) -> None:
        self.options = options or HFOptions()
        self.name, self.revision = name, revision
        self.gguf_file = self.options.gguf_file
        if self.gguf_file is None and name.endswith(".gguf") and Path(name).expanduser().is_file():
            path = Path(name).expanduser()
            self.name, self.gguf_file = str(path.parent), path.name
        self.spec = f"{self.scheme}:{name}" + (f"@{revision}" if revision else "")
        self.torch, _ = import_transformers()
        self.owned = loaded is None  # a model given in memory belongs to its caller: never freed here
        if loaded is None:
            self.tokenizer = self._load_tokenizer()
            self.model = self._load_model().eval()
        else:
            self.model, self.tokenizer = loaded
        self.prompt_format = (
            "chat" if self.options.apply_chat_template and self.tokenizer.chat_template else "plain"
        )
        self.system_role = self._probe_system_role()
        self.eos_ids = self._eos_ids()
        if self.tokenizer.pad_token_id is None and self.owned:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.pad_id = (
            self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_ids[0]
        )

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> HFAdapter:
        return cls(spec.name, spec.revision, options)

    @classmethod
    def from_loaded(cls, model: Any, tokenizer: Any, options: HFOptions | None = None) -> HFAdapter:
        """A transformers model and tokenizer already in memory (e.g. in a training loop): the same prompts
        and decoding as `hf:PATH` of the same weights. The model is put in eval mode for each batch and
        back in the mode it was in; it is never moved, freed or changed otherwise."""
        name = str(getattr(model.config, "name_or_path", "") or "in-memory-model")
        return cls(name, None, options, loaded=(model, tokenizer))

    # loading -------------------------------------------------------------------------------------

    def _hub_kwargs(self, revision: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"trust_remote_code": self.options.trust_remote_code}
        if revision:
            kwargs["revision"] = revision
        if self.gguf_file:
            kwargs["gguf_file"] = self.gguf_file
        return kwargs

    def _tokenizer_source(self) -> tuple[str, str | None]:
        """Where the tokenizer comes from: the model itself (PeftAdapter may prefer the adapter's folder)."""
        return self.name, self.revision

    def _load_tokenizer(self) -> Any:
        from transformers import AutoTokenizer

        name, revision = self._tokenizer_source()
        if not Path(name).expanduser().exists():
            offline()  # a Hub id: without a network, the local cache only (no minute of retries)
        kwargs = self._hub_kwargs(revision)
        if name != self.name:  # e.g. a PEFT adapter's own tokenizer: the base's GGUF file is not there
            kwargs.pop("gguf_file", None)
        try:
            return AutoTokenizer.from_pretrained(name, **kwargs)
        except (OSError, ValueError, KeyError) as error:
            raise load_error("tokenizer", name, error) from None

    def _dtype(self) -> Any:
        dtype = self.options.dtype
        return "auto" if dtype == "auto" else getattr(self.torch, dtype)

    def _load_model(self) -> Any:
        """The causal LM, on its device(s), in eval mode. PeftAdapter overrides this (and only this) step."""
        from transformers import AutoModelForCausalLM

        kwargs = {
            **self._hub_kwargs(self.revision),
            "dtype": self._dtype(),
            **device_kwargs(self.torch, self.options.device),
        }
        if self.options.attn_implementation:
            kwargs["attn_implementation"] = self.options.attn_implementation
        try:
            return AutoModelForCausalLM.from_pretrained(self.name, **kwargs)
        except Exception as error:
            if not files_at_fault(error):
                raise
            raise load_error("model", self.name, error) from None

    def _probe_system_role(self) -> str:
        if self.prompt_format == "plain":
            return "merged"
        return probe_system_role(
            lambda messages: self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            ),
            template_source(self._tokenizer_source()[0]),
        )

    def _eos_ids(self) -> list[int]:
        ids: list[int] = []
        configured = getattr(self.model.generation_config, "eos_token_id", None)
        for value in [self.tokenizer.eos_token_id, configured]:
            for token in value if isinstance(value, list) else [value]:
                if token is not None and token not in ids:
                    ids.append(int(token))
        if not ids:
            raise ModelError(
                f"{self.name!r} has no EOS token",
                where="--model",
                fix="use a tokenizer with an eos_token, or a model whose generation_config sets one",
            )
        return ids

    # prompts and generation ------------------------------------------------------------------------

    def render(self, messages: Sequence[Message]) -> str:
        """The exact prompt text the model sees for a conversation."""
        if self.prompt_format == "plain":
            return plain_prompt(messages)
        turns = merge_system(messages) if self.system_role == "merged" else list(messages)
        return str(self.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True))

    def encode(self, messages: Sequence[Message]) -> list[int]:
        text = self.render(messages)
        # a chat template writes its own special tokens; plain text gets the tokenizer's usual ones (BOS)
        ids: list[int] = self.tokenizer(text, add_special_tokens=self.prompt_format == "plain")["input_ids"]
        return ids

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        if config.batch_size < 1:
            raise ConfigError(
                f"batch size {config.batch_size} is not positive",
                where="--batch-size",
                fix="use --batch-size 1 or more",
            )
        encoded = [self.encode(request.messages) for request in requests]
        hf_config = decoding_config(config, self.eos_ids, self.pad_id)
        for batch in length_batches([len(ids) for ids in encoded], config.batch_size):
            rows = [requests[i] for i in batch]
            sampler = None
            if config.samples:  # each row draws with its request's own seed (`model_adapters.row_sampling`)
                seeds = [config.seed_for(r) for r in rows]
                sampler = RowSampler(self.torch, seeds, config.temperature, config.top_p)
            yield from self._generate_batch(rows, [encoded[i] for i in batch], hf_config, sampler)

    def batches(self, requests: Sequence[Request], config: GenerationConfig) -> list[list[int]]:
        """The batches `generate` forms (indices into `requests`). A data-parallel pool gives each replica
        whole batches, so the padding, and so the greedy answers, are those of one process."""
        return length_batches([len(self.encode(r.messages)) for r in requests], config.batch_size)

    def _generate_batch(
        self, requests: list[Request], encoded: list[list[int]], hf_config: Any, sampler: RowSampler | None
    ) -> Iterator[tuple[Request, Generation]]:
        started = time.perf_counter()
        new_tokens = generate_tokens(self.torch, self.model, self.pad_id, encoded, hf_config, sampler)
        seconds = (time.perf_counter() - started) / len(requests)
        yield from answers(requests, encoded, new_tokens, self.eos_ids, self.tokenizer, seconds)

    # identity ------------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        resolved = getattr(self.model.config, "_commit_hash", None)
        return {
            "name": self.name,
            "revision": resolved or self.revision,
            "requested_revision": self.revision,
            "backend": self.backend,
            "gguf_file": self.gguf_file,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "device": str(input_device(self.model)),
            "prompt_format": self.prompt_format,
            "system_role": self.system_role,
            "chat_template_sha256": text_sha256(self.tokenizer.chat_template)
            if self.prompt_format == "chat"
            else None,
        }

    def fingerprint_loaded(self) -> dict[str, Any]:
        """The identity of a model given in memory: a digest of every weight and buffer (so the answers of
        other weights, e.g. a later training step, are never served from the store), of the tokenizer's
        vocabulary, special tokens and chat template, and of the model's config and generation_config
        (e.g. its `eos_token_id`: where answers stop), with the stop and padding ids they give."""
        return {
            "spec": self.spec,
            "options": self.options.identity(),
            **loaded_digests(self.torch, self.model, self.tokenizer),
            "stop_ids": list(self.eos_ids),
            "pad_id": self.pad_id,
        }

    def close(self) -> None:
        if not self.owned:
            return
        self.model = None
        gc.collect()
        if self.torch.cuda.is_available():
            self.torch.cuda.empty_cache()
