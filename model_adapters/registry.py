"""The one table of model backends: scheme -> implementing class (imported only when chosen) and spec syntax.

A backend's heavy SDK is never imported unless its scheme is used. A new backend is one module and
one line here.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Literal

from model_adapters.errors import ConfigError

# How the part of a spec after `SCHEME:` reads (parsed in `model_adapters.spec`, nowhere else).
Syntax = Literal["revisioned", "base+adapter", "model@url", "path", "name,args", "name"]


@dataclass(frozen=True)
class Backend:
    scheme: str
    target: str  # "module:Class"
    syntax: Syntax
    usage: str  # the spec's form, as help text shows it

    def load_class(self) -> type:
        """The implementing class (its module imported now; see `model_adapters.loading`)."""
        module_name, _, class_name = self.target.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        if not isinstance(cls, type):
            raise TypeError(f"{self.target} is not a class")
        return cls


BACKENDS: dict[str, Backend] = {
    b.scheme: b
    for b in (
        Backend("hf", "model_adapters.hf:HFAdapter", "revisioned", "hf:ID_OR_PATH[@REVISION]"),
        Backend("peft", "model_adapters.peft:PeftAdapter", "base+adapter", "peft:BASE[@REV]+ADAPTER[@REV]"),
        Backend("openai", "model_adapters.openai_api:OpenAIAdapter", "model@url", "openai:MODEL[@BASE_URL]"),
        Backend("llamacpp", "model_adapters.llamacpp:LlamaCppAdapter", "path", "llamacpp:PATH_TO_GGUF"),
        Backend("smollm2", "model_adapters.llamacpp:SmolLM2Adapter", "name", "smollm2:135m"),
        Backend("vllm", "model_adapters.vllm:VLLMAdapter", "revisioned", "vllm:ID_OR_PATH[@REVISION]"),
        Backend("lmeval", "model_adapters.lmeval:LMEvalAdapter", "name,args", "lmeval:NAME[,key=value...]"),
        Backend(
            "baseline",
            "model_adapters.baseline:BaselineAdapter",
            "name",
            "baseline:rolegpt|question|description|train|greeting",
        ),
    )
}


def backend(scheme: str, *, spec: str = "", where: str = "--model") -> Backend:
    """The backend of a scheme; one clear error (with a suggestion) for an unknown one."""
    found = BACKENDS.get(scheme)
    if found is None:
        close = difflib.get_close_matches(scheme, list(BACKENDS), n=1)
        hint = f"did you mean {close[0]}:? " if close else ""
        shown = f" in {spec!r}" if spec else ""
        raise ConfigError(
            f"unknown model scheme {scheme!r}{shown}",
            where=where,
            fix=hint + "known schemes: " + ", ".join(BACKENDS),
        )
    return found


def usages() -> str:
    """Every spec form, for help texts and errors."""
    return ", ".join(b.usage for b in BACKENDS.values())
