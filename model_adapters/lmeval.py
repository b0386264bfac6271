"""`lmeval:MODEL_NAME[,key=value...]`: any model class of lm-evaluation-harness's registry.

`lmeval:hf,pretrained=/path/to/model,dtype=float32` builds the lm-eval model exactly as
`lm_eval --model hf --model_args pretrained=...` would (`get_model(name).create_from_arg_string`),
so every backend lm-eval supports (hf, vllm, gguf, sglang, openai-chat-completions, ...) can answer
RoleBench through `rolebench evaluate`. Prompts are rendered with the lm-eval model's own
`apply_chat_template`; since lm-eval's HF backend silently drops a system turn its template
rejects, the system text is merged into the first user turn instead (`info()["system_role"]`).
Answers come from `generate_until` (stop: EOS only; greedy at temperature 0; under sampling one request
per call, torch seeded with the request's own seed, `GenerationConfig.seed_for`).

Options (`--model-args`, beside the spec's own lm-eval arguments): `apply_chat_template`
(true; false or a model without a template gives plain text, turns joined by a blank line),
`device` (lm-eval's --device), `chunk_size` (64 requests per generate_until call, so answers are
stored as they come). Without `batch_size=` in the spec, `--batch-size` sets lm-eval's batch size.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from pydantic import Field

from model_adapters.chat import merge_system, plain_prompt, probe_system_role, text_sha256
from model_adapters.errors import ConfigError, MissingDependency, ModelError, first_line
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Message, Request, Usage
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

SECRET_HINTS = ("key", "token", "secret", "password")


class LMEvalOptions(AdapterOptions):
    transport: ClassVar[frozenset[str]] = frozenset({"chunk_size"})

    apply_chat_template: bool = True
    device: str | None = None
    chunk_size: int = Field(64, ge=1)


def redacted(args: str) -> str:
    """The argument string with secret-looking values replaced, for results files."""
    parts = []
    for part in filter(None, args.split(",")):
        key, sep, value = part.partition("=")
        hidden = sep and any(hint in key.lower() for hint in SECRET_HINTS)
        parts.append(f"{key}=***" if hidden else part)
    return ",".join(parts)


def build_lm(name: str, args: str, extra: dict[str, Any]) -> Any:
    """lm-eval's model object for `name` and its argument string."""
    try:
        from lm_eval.api.registry import get_model
    except ImportError:
        raise MissingDependency("lmeval: models", "lm_eval", "lmeval") from None
    try:
        cls = get_model(name)
    except ValueError as error:
        raise ConfigError(
            f"lm-eval has no model {name!r}", where="--model", fix=first_line(error).split("found! ")[-1]
        ) from None
    try:
        return cls.create_from_arg_string(args, extra)
    except (OSError, ValueError, TypeError, KeyError) as error:
        raise ModelError(
            f"lm-eval cannot build model {name!r} from {redacted(args)!r}: {first_line(error)}",
            where="--model",
            fix="check the lm-eval model arguments (lm_eval --model_args syntax)",
        ) from None


class LMEvalAdapter(AdapterBase):
    """An lm-eval `LM` behind the ModelAdapter protocol (generate_until only)."""

    Options: ClassVar[type[AdapterOptions]] = LMEvalOptions

    def __init__(self, name: str, args: str, options: LMEvalOptions | None = None) -> None:
        self.name, self.args = name, args
        self.options = options or LMEvalOptions()
        self.spec = f"lmeval:{name}" + (f",{redacted(args)}" if args else "")
        self.fixed_batch_size = "batch_size=" in args
        extra = {
            "batch_size": None if self.fixed_batch_size else GenerationConfig().batch_size,
            "device": self.options.device,
        }
        self.lm = build_lm(name, args, extra)
        self.prompt_format = "chat" if self.options.apply_chat_template and self._renders_chat() else "plain"
        self.system_role = "merged" if self.prompt_format == "plain" else probe_system_role(self._chat)
        accepted = inspect.signature(self.lm.generate_until).parameters
        self._quiet = {"disable_tqdm": True} if "disable_tqdm" in accepted else {}

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> LMEvalAdapter:
        return cls(spec.name, spec.args, options)

    def _chat(self, messages: list[Message]) -> str:
        return str(self.lm.apply_chat_template(messages, add_generation_prompt=True))

    def _renders_chat(self) -> bool:
        """Whether the lm-eval model can render a chat at all (base models have no template)."""
        try:
            return bool(self._chat([{"role": "user", "content": "Hi"}]))
        except (ValueError, NotImplementedError, AttributeError, TypeError):
            return False

    def render(self, messages: Sequence[Message]) -> str:
        if self.prompt_format == "plain":
            return plain_prompt(messages)
        return self._chat(merge_system(messages) if self.system_role == "merged" else list(messages))

    def _gen_kwargs(self, config: GenerationConfig) -> dict[str, Any]:
        sampling = config.temperature > 0
        kwargs: dict[str, Any] = {
            "until": [],
            "max_gen_toks": config.max_new_tokens,
            "do_sample": sampling,
            "temperature": config.temperature if sampling else 0.0,
        }
        if sampling:
            kwargs["top_p"] = config.top_p
        if config.repetition_penalty != 1.0:  # passed to the backend's generate (hf, vllm, ...)
            kwargs["repetition_penalty"] = config.repetition_penalty
        return kwargs

    def _prepare(self, config: GenerationConfig) -> None:
        if not self.fixed_batch_size and hasattr(self.lm, "batch_size_per_gpu"):
            self.lm.batch_size_per_gpu = config.batch_size  # lm-eval HF models read their batch size here

    @staticmethod
    def _seed(seed: int) -> None:
        """Seed torch's draws (lm-eval's local models sample with torch's global generator)."""
        try:
            import torch
        except ImportError:
            return
        torch.manual_seed(seed)

    def _count(self, text: str) -> int:
        encode = getattr(self.lm, "tok_encode", None)
        return len(encode(text)) if callable(encode) else 0

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        from lm_eval.api.instance import Instance

        self._prepare(config)
        kwargs = self._gen_kwargs(config)
        # sampling: one request per call, torch seeded with its own seed (lm-eval draws for a batch at once)
        size = 1 if config.samples else self.options.chunk_size
        for start in range(0, len(requests), size):
            chunk = list(requests[start : start + size])
            if config.samples:
                self._seed(config.seed_for(chunk[0]))
            contexts = [self.render(r.messages) for r in chunk]
            instances = [
                Instance(
                    request_type="generate_until",
                    doc={"id": r.id},
                    arguments=(ctx, dict(kwargs)),
                    idx=0,
                    metadata=("rolebench", start + i, 1),
                )
                for i, (r, ctx) in enumerate(zip(chunk, contexts, strict=True))
            ]
            started = time.perf_counter()
            texts = self.lm.generate_until(instances, **self._quiet)
            seconds = (time.perf_counter() - started) / len(chunk)
            for request, context, text in zip(chunk, contexts, texts, strict=True):
                usage = Usage(prompt_tokens=self._count(context), completion_tokens=self._count(text))
                yield request, Generation(text=text, usage=usage, seconds=seconds)

    def info(self) -> dict[str, Any]:
        details = {}
        get_info = getattr(self.lm, "get_model_info", None)
        if callable(get_info):
            details = {k: str(v) for k, v in get_info().items() if v not in (None, "")}
        import lm_eval

        template = getattr(getattr(self.lm, "tokenizer", None), "chat_template", None)

        pairs = dict(part.partition("=")[::2] for part in filter(None, self.args.split(",")))
        return {
            "name": pairs.get("pretrained") or pairs.get("model") or self.name,
            "revision": pairs.get("revision") or details.get("model_sha") or None,
            "backend": f"lm_eval:{self.name}",
            "lm_eval": lm_eval.__version__,
            "model_args": redacted(self.args),
            "lm_eval_model_info": details,
            "prompt_format": self.prompt_format,
            "system_role": self.system_role,
            "chat_template_sha256": text_sha256(template) if self.prompt_format == "chat" else None,
        }

    def close(self) -> None:
        self.lm = None
