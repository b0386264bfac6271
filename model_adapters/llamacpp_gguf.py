"""A GGUF model loaded once through llama.cpp's C API: weights, vocabulary, chat rendering, tokens.

Prompts are rendered and tokenized exactly as llama-cpp-python's `create_chat_completion` does it:
the GGUF's own chat template (`Jinja2ChatFormatter` with the model's EOS/BOS text), or a named
llama-cpp-python chat format (`chat_format=chatml`, ...); the formatter's `added_special` decides
whether a BOS token is added, and its stop strings end an answer. A template that rejects or drops
a system turn gets the system text merged into the first user turn (`system_role == "merged"`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model_adapters.chat import merge_system, probe_system_role
from model_adapters.errors import ConfigError, ModelError
from model_adapters.interface import Message

META_BUFFER = 1 << 16  # bytes for one metadata value (chat templates run to a few KB)


def named_formatter(name: str) -> Any:
    """The formatter behind a llama-cpp-python chat format name (`chatml`, `llama-2`, ...)."""
    from llama_cpp.llama_chat_format import (
        LlamaChatCompletionHandlerNotFoundException,
        LlamaChatCompletionHandlerRegistry,
    )

    try:
        registry: Any = LlamaChatCompletionHandlerRegistry()  # type: ignore[no-untyped-call]
        handler: Any = registry.get_chat_completion_handler_by_name(name)
    except (LlamaChatCompletionHandlerNotFoundException, ValueError):
        raise ConfigError(
            f"unknown chat_format {name!r}",
            where="--model-args",
            fix="name a llama-cpp-python chat format (chatml, llama-2, llama-3, mistral-instruct, ...), "
            "or leave chat_format out to use the GGUF's own template",
        ) from None
    cells = dict(zip(handler.__code__.co_freevars, handler.__closure__ or (), strict=False))
    if "chat_formatter" not in cells:
        raise ConfigError(
            f"chat_format {name!r} is not a plain prompt format (it runs its own completion code)",
            where="--model-args",
            fix="use a prompt format such as chatml, or the GGUF's own template",
        )
    return cells["chat_formatter"].cell_contents


class GGUFModel:
    """Weights and vocabulary of one GGUF file; llama.cpp contexts are created on it separately."""

    def __init__(self, path: Path, *, chat_format: str | None, n_gpu_layers: int, verbose: bool) -> None:
        import llama_cpp
        from llama_cpp._logger import (
            set_verbose,
        )  # llama-cpp-python's log callback: errors only unless verbose

        set_verbose(verbose)
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers
        self.path = path
        self.ptr: Any = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        if not self.ptr:
            raise ModelError(
                f"llama.cpp cannot load {str(path)!r}",
                where="--model",
                fix="check that the file is a GGUF model supported by this llama-cpp-python "
                "(model_args verbose=true shows llama.cpp's own message)",
            )
        self.vocab = llama_cpp.llama_model_get_vocab(self.ptr)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.n_ctx_train = int(llama_cpp.llama_model_n_ctx_train(self.ptr))
        self.template = None if chat_format else self.meta("tokenizer.chat_template")
        self.chat_format = chat_format or "chat_template.default"
        self.formatter = named_formatter(chat_format) if chat_format else self._template_formatter()
        self._pieces: dict[int, bytes] = {}
        self.system_role = probe_system_role(lambda messages: str(self.formatter(messages=messages).prompt))

    def _template_formatter(self) -> Any:
        from llama_cpp import llama_vocab_bos, llama_vocab_eos
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        if not self.template:
            raise ConfigError(
                f"the GGUF {self.path.name!r} has no chat template",
                where="--model",
                fix="name its prompt format with --model-args chat_format=NAME (chatml, llama-2, ...)",
            )
        eos, bos = llama_vocab_eos(self.vocab), llama_vocab_bos(self.vocab)
        # The arguments llama-cpp-python's Llama gives its "chat_template.default" handler.
        return Jinja2ChatFormatter(
            template=self.template,
            eos_token=self.token_text(eos) if eos != -1 else "",
            bos_token=self.token_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )

    def meta(self, key: str) -> str | None:
        from llama_cpp import llama_model_meta_val_str

        buffer = ctypes.create_string_buffer(META_BUFFER)
        size = llama_model_meta_val_str(self.ptr, key.encode(), buffer, META_BUFFER)
        return None if size < 0 else buffer.value.decode("utf-8", "replace")

    def token_text(self, token: int) -> str:
        from llama_cpp import llama_vocab_get_text

        text = llama_vocab_get_text(self.vocab, token)
        return text.decode("utf-8", "replace") if text else ""

    def tokenize(self, text: str, *, add_bos: bool) -> list[int]:
        from llama_cpp import llama_token, llama_tokenize

        data = text.encode("utf-8")
        size = len(data) + 8
        for _ in range(2):
            buffer = (llama_token * size)()
            n = llama_tokenize(self.vocab, data, len(data), buffer, size, add_bos, True)
            if n >= 0:
                return list(buffer[:n])
            size = -n  # too small: llama.cpp says how many tokens there are
        raise ModelError("llama.cpp cannot tokenize a prompt", where="--model", fix="report this prompt")

    def chat(self, messages: Sequence[Message]) -> tuple[list[int], tuple[str, ...]]:
        """Prompt tokens and stop strings of a conversation, as `create_chat_completion` makes them."""
        turns = merge_system(messages) if self.system_role == "merged" else list(messages)
        result = self.formatter(messages=turns)
        stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
        return self.tokenize(result.prompt, add_bos=not result.added_special), tuple(stop)

    def piece(self, token: int) -> bytes:
        """The bytes a generated token adds to the answer (special tokens add none)."""
        cached = self._pieces.get(token)
        if cached is None:
            from llama_cpp import llama_token_to_piece

            buffer = ctypes.create_string_buffer(256)
            n = llama_token_to_piece(self.vocab, token, buffer, 256, 0, False)
            cached = self._pieces[token] = buffer.raw[: max(n, 0)]
        return cached

    def is_end(self, token: int) -> bool:
        from llama_cpp import llama_vocab_is_eog

        return bool(llama_vocab_is_eog(self.vocab, token))

    def close(self) -> None:
        if self.ptr:
            from llama_cpp import llama_model_free

            llama_model_free(self.ptr)
            self.ptr = None
