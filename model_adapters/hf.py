"""`hf:ID_OR_PATH[@REVISION]`: a transformers causal LM, batched, with its own chat template.

Prompts are rendered with the tokenizer's chat template (`add_generation_prompt=True`) and encoded
without extra special tokens (the template carries them). A template that rejects (or silently
drops) a system turn gets the system text merged into the first user turn (`rolebench.prompt.
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
from model_adapters.errors import ConfigError, MissingDependency, ModelError, first_line
from model_adapters.files import damaged_weights
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Message, Request, Usage
from model_adapters.network import offline
from model_adapters.options import AdapterOptions
from model_adapters.row_sampling import RowSampler
from model_adapters.spec import ModelSpec, missing_local_path

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


def _config_dict(config: Any) -> dict[str, Any]:
    """A transformers config as the settings it holds (its library version and path aside: neither
    changes an answer, and the path of the same weights may differ)."""
    if config is None or not hasattr(config, "to_dict"):
        return {}
    found: dict[str, Any] = config.to_dict()
    return {
        k: v for k, v in found.items() if k not in ("transformers_version", "_name_or_path", "_commit_hash")
    }


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices by prompt length, longest first (a too-large batch fails at once), `batch_size` at a time."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def files_at_fault(error: BaseException) -> bool:
    """Whether loading failed on the files (missing, unreadable, damaged), not on a bug: what transformers
    and peft raise then, and safetensors' own SafetensorError (a direct subclass of Exception)."""
    return isinstance(error, OSError | ValueError | KeyError) or type(error).__name__ == "SafetensorError"


def import_transformers() -> tuple[Any, Any]:
    """(torch, transformers), or MissingDependency with the install line."""
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingDependency("hf: models", "torch and transformers", "hf") from None
    return torch, transformers


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
            raise self._load_error("tokenizer", name, error) from None

    def _load_error(self, what: str, name: str, error: BaseException) -> ModelError:
        if missing_local_path(name):
            return ModelError(
                f"cannot load the {what} of {name!r}: no such folder ({Path(name).expanduser().absolute()})",
                where="--model",
                fix="check the path (a local folder: hf:PATH; a Hub model: hf:ORG/NAME)",
            )
        damaged = damaged_weights(name)  # a download cut short, an empty file
        if damaged:
            file, damage = damaged[0]
            return ModelError(
                f"the weights file {file} is damaged ({damage})",
                where="--model",
                fix="download or save the model again (hf download, save_pretrained)",
            )
        if not Path(name).expanduser().exists() and offline():
            return ModelError(
                f"cannot load the {what} of {name!r}: the Hub cannot be reached and it is not in the "
                "local cache",
                where="--model",
                fix="connect to the network, or give a local folder (hf:PATH)",
            )
        return ModelError(
            f"cannot load the {what} of {name!r}: {first_line(error)}",
            where="--model",
            fix="check the id, path and revision",
        )

    def _dtype(self) -> Any:
        dtype = self.options.dtype
        return "auto" if dtype == "auto" else getattr(self.torch, dtype)

    def _device_kwargs(self) -> dict[str, Any]:
        device = self.options.device.lower()
        if device == "auto":
            return {"device_map": "auto"} if self.torch.cuda.is_available() else {}
        if device.startswith("cuda") and not self.torch.cuda.is_available():
            raise ConfigError(
                f"device={device} but no CUDA GPU is visible",
                where="--model-args",
                fix="use device=cpu or device=auto",
            )
        return {} if device == "cpu" else {"device_map": device}

    def _load_model(self) -> Any:
        """The causal LM, on its device(s), in eval mode. PeftAdapter overrides this (and only this) step."""
        from transformers import AutoModelForCausalLM

        kwargs = {**self._hub_kwargs(self.revision), "dtype": self._dtype(), **self._device_kwargs()}
        if self.options.attn_implementation:
            kwargs["attn_implementation"] = self.options.attn_implementation
        try:
            return AutoModelForCausalLM.from_pretrained(self.name, **kwargs)
        except Exception as error:
            if not files_at_fault(error):
                raise
            raise self._load_error("model", self.name, error) from None

    def _probe_system_role(self) -> str:
        if self.prompt_format == "plain":
            return "merged"
        return probe_system_role(
            lambda messages: self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            ),
            self._template_source(),
        )

    def _template_source(self) -> str:
        """Where the chat template was read from, as the user can find it."""
        folder = Path(self._tokenizer_source()[0]).expanduser()
        if not folder.is_dir():
            return f"the chat template of {self._tokenizer_source()[0]}"
        for name in ("chat_template.jinja", "chat_template.json", "tokenizer_config.json"):
            if (folder / name).is_file():
                return f"the chat template in {folder / name}"
        return f"the chat template of {folder}"

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

    def _hf_generation_config(self, config: GenerationConfig) -> Any:
        from transformers import GenerationConfig as HFGenerationConfig

        # greedy, also under sampling: a RowSampler then leaves each row only the token it drew
        return HFGenerationConfig(  # type: ignore[no-untyped-call]
            max_new_tokens=config.max_new_tokens,
            do_sample=False,
            temperature=1.0,
            top_p=1.0,
            repetition_penalty=config.repetition_penalty,
            num_beams=1,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
        )

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
        hf_config = self._hf_generation_config(config)
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

    @staticmethod
    def _processors(sampler: RowSampler) -> Any:
        from transformers import LogitsProcessorList

        return LogitsProcessorList([sampler])

    def _input_device(self) -> Any:
        return self.model.get_input_embeddings().weight.device

    def _generate_batch(
        self, requests: list[Request], encoded: list[list[int]], hf_config: Any, sampler: RowSampler | None
    ) -> Iterator[tuple[Request, Generation]]:
        started = time.perf_counter()
        width = max(len(ids) for ids in encoded)
        padded = [[self.pad_id] * (width - len(ids)) + ids for ids in encoded]
        mask = [[0] * (width - len(ids)) + [1] * len(ids) for ids in encoded]
        device = self._input_device()
        training = bool(getattr(self.model, "training", False))
        self.model.eval()
        try:
            with self.torch.inference_mode():
                output = self.model.generate(
                    input_ids=self.torch.tensor(padded, device=device),
                    attention_mask=self.torch.tensor(mask, device=device),
                    generation_config=hf_config,
                    **({} if sampler is None else {"logits_processor": self._processors(sampler)}),
                )
        finally:
            if training:
                self.model.train()
        new_tokens = output[:, width:].tolist()
        seconds = (time.perf_counter() - started) / len(requests)
        for request, ids, tokens in zip(requests, encoded, new_tokens, strict=True):
            stop = next((i for i, token in enumerate(tokens) if token in self.eos_ids), None)
            completion = tokens if stop is None else tokens[:stop]
            text = self.tokenizer.decode(completion, skip_special_tokens=True)
            usage = Usage(prompt_tokens=len(ids), completion_tokens=len(completion) + (stop is not None))
            yield (
                request,
                Generation(
                    text=text,
                    usage=usage,
                    seconds=seconds,
                    finish_reason="length" if stop is None else "stop",
                ),
            )

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
            "device": str(self._input_device()),
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
        import hashlib
        import json

        digest = hashlib.blake2b(digest_size=16)
        for key, tensor in sorted(self.model.state_dict().items()):
            digest.update(key.encode())
            digest.update(str(tensor.dtype).encode())
            flat = tensor.detach().to("cpu").contiguous().reshape(-1)
            digest.update(flat.view(self.torch.uint8).numpy().tobytes())
        vocab = sorted(self.tokenizer.get_vocab().items())
        tokenizer = text_sha256(repr(vocab) + str(self.tokenizer.chat_template or ""))
        special = getattr(self.tokenizer, "special_tokens_map", {}) or {}
        configs = {
            name: _config_dict(getattr(self.model, name, None)) for name in ("config", "generation_config")
        }
        return {
            "spec": self.spec,
            "options": self.options.identity(),
            "weights_digest": digest.hexdigest(),
            "tokenizer_sha256": tokenizer,
            "special_tokens_sha256": text_sha256(json.dumps(special, sort_keys=True, default=str)),
            "configs_sha256": text_sha256(json.dumps(configs, sort_keys=True, default=str)),
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
