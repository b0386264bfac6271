"""`ModelSpec`: the one parser of model spec strings (`SCHEME:REST`), e.g. `hf:Qwen/Qwen2.5-0.5B@main`.

How REST reads depends on the scheme's syntax (`model_adapters.registry`):
- revisioned (`hf`, `vllm`): `ID_OR_PATH[@REVISION]`; an existing local path is never split at `@`;
- base+adapter (`peft`): `BASE[@REV]+ADAPTER[@REV]`, each part revisioned;
- model@url (`openai`): `MODEL[@BASE_URL]`;
- path (`llamacpp`): a file path (or a short name the backend knows);
- name,args (`lmeval`): `NAME[,key=value...]`, lm-eval's own model arguments;
- name (`baseline`, `smollm2`): a plain name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from model_adapters.errors import ConfigError
from model_adapters.registry import backend, usages


def missing_local_path(name: str) -> bool:
    """Whether `name` is written as a local path (`./x`, `../x`, `/x`, `~/x`; a Hub id starts with none of
    these) and nothing is there: say so, not that the Hub cannot be reached."""
    local = name in (".", "..") or name.startswith(("./", "../", "/", "~", ".\\", "..\\"))
    return local and not Path(name).expanduser().exists()


def split_revision(text: str, where: str = "--model") -> tuple[str, str | None]:
    """`ID[@REVISION]` -> (ID, REVISION); an existing local path is never split."""
    if "@" not in text or Path(text).expanduser().exists():
        name, revision = text, None
    else:
        name, _, revision = text.rpartition("@")
        if not revision:
            raise ConfigError(f"empty revision in {text!r}", where=where, fix="write ID@REVISION or just ID")
    if not name:
        raise ConfigError(f"no model id or path in {text!r}", where=where, fix="write ID_OR_PATH[@REVISION]")
    return name, revision


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec. `name` is the model id, path or name; the other fields depend on the scheme."""

    scheme: str
    name: str
    revision: str | None = None
    adapter: str | None = None  # peft: the adapter's id or folder
    adapter_revision: str | None = None
    base_url: str | None = None  # openai: a base URL given in the spec
    args: str = ""  # lmeval: the lm-eval model arguments

    @classmethod
    def parse(cls, text: str, *, where: str = "--model") -> ModelSpec:
        """Parse `SCHEME:REST`; one clear ConfigError for anything malformed."""
        if not isinstance(text, str):
            raise ConfigError(f"model spec {text!r} is not a string", where=where, fix="write SCHEME:NAME")
        scheme, sep, rest = text.strip().partition(":")
        if not sep or not rest.strip():
            raise ConfigError(
                f"model spec {text!r} has no scheme", where=where, fix=f"write one of {usages()}"
            )
        syntax = backend(scheme, spec=text, where=where).syntax
        rest = rest.strip()
        if syntax == "revisioned":
            name, revision = split_revision(rest, where)
            return cls(scheme, name, revision)
        if syntax == "base+adapter":
            base, plus, adapter = rest.partition("+")
            if not plus or not base.strip() or not adapter.strip():
                raise ConfigError(
                    f"peft spec {rest!r} needs a base model and an adapter",
                    where=where,
                    fix="write peft:BASE+ADAPTER, e.g. peft:meta-llama/Llama-2-7b-hf+./my-lora",
                )
            name, revision = split_revision(base.strip(), where)
            adapter_name, adapter_revision = split_revision(adapter.strip(), where)
            return cls(scheme, name, revision, adapter=adapter_name, adapter_revision=adapter_revision)
        if syntax == "model@url":
            model, at, url = rest.partition("@")
            if not model or (at and not url):
                raise ConfigError(
                    f"bad OpenAI model spec {text}",
                    where=where,
                    fix="write openai:MODEL or openai:MODEL@BASE_URL",
                )
            return cls(scheme, model, base_url=url or None)
        if syntax == "name,args":
            name, _, args = rest.partition(",")
            if not name.strip() or "=" in name:
                raise ConfigError(
                    f"lmeval spec {rest!r} does not start with an lm-eval model name",
                    where=where,
                    fix="write lmeval:MODEL_NAME[,key=value...], e.g. lmeval:hf,pretrained=gpt2",
                )
            return cls(scheme, name.strip(), args=args.strip())
        return cls(scheme, rest)

    def __str__(self) -> str:
        """The canonical spec text (parsing it again gives an equal ModelSpec)."""

        def revisioned(name: str, revision: str | None) -> str:
            return name + (f"@{revision}" if revision else "")

        if self.adapter is not None:
            rest = (
                revisioned(self.name, self.revision) + "+" + revisioned(self.adapter, self.adapter_revision)
            )
        elif self.base_url is not None:
            rest = f"{self.name}@{self.base_url}"
        elif self.args:
            rest = f"{self.name},{self.args}"
        else:
            rest = revisioned(self.name, self.revision)
        return f"{self.scheme}:{rest}"

    def with_base_url(self, url: str | None) -> ModelSpec:
        return replace(self, base_url=url)
