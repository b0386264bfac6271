"""`peft:BASE[@REV]+ADAPTER[@REV]`: a base causal LM with a PEFT (e.g. LoRA) adapter on top.

Both parts are a local folder or a Hub id. Everything but model loading is HFAdapter's (prompts,
batching, decoding). The tokenizer comes from the adapter's folder when it has one (training
scripts usually save the tokenizer, and its chat template, beside the adapter), else from the base.
Options: HFAdapter's, plus `merge=true` to fold the adapter into the base weights
(`merge_and_unload`, faster generation). `info()` adds the adapter, its revision and, for a local
adapter, the sha256 of its weight files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, ClassVar

from model_adapters.errors import ConfigError, MissingDependency
from model_adapters.files import tokenizer_fingerprint, weights_fingerprint
from model_adapters.hf import HFAdapter, HFOptions
from model_adapters.hf_loading import files_at_fault, load_error
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

WEIGHT_SUFFIXES = (".safetensors", ".bin")


class PeftOptions(HFOptions):
    merge: bool = False


def adapter_weights_sha256(folder: Path) -> str | None:
    """sha256 over the names and bytes of a local adapter's weight files (None if it has none)."""
    files = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.name.startswith("adapter_") and p.suffix in WEIGHT_SUFFIXES
    )
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


class PeftAdapter(HFAdapter):
    """HFAdapter whose model is BASE with a PEFT adapter loaded (optionally merged)."""

    scheme = "peft"
    backend = "transformers+peft"
    Options: ClassVar[type[AdapterOptions]] = PeftOptions

    def __init__(
        self,
        base: str,
        base_revision: str | None,
        adapter: str,
        adapter_revision: str | None,
        options: PeftOptions | None = None,
    ) -> None:
        self.adapter, self.adapter_revision = adapter, adapter_revision
        self.merge = (options or PeftOptions()).merge
        super().__init__(base, base_revision, options or PeftOptions())
        self.spec = (
            f"peft:{base}"
            + (f"@{base_revision}" if base_revision else "")
            + f"+{adapter}"
            + (f"@{adapter_revision}" if adapter_revision else "")
        )

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> PeftAdapter:
        if spec.adapter is None:
            raise ConfigError(f"{spec} names no adapter", where="--model", fix="write peft:BASE+ADAPTER")
        return cls(spec.name, spec.revision, spec.adapter, spec.adapter_revision, options)

    @classmethod
    def fingerprint(cls, spec: ModelSpec, options: Any) -> dict[str, Any]:
        found = {
            "weights": weights_fingerprint(spec.name),
            "tokenizer": tokenizer_fingerprint(spec.name),
            "adapter": weights_fingerprint(spec.adapter or ""),
            "adapter_tokenizer": tokenizer_fingerprint(spec.adapter or ""),
        }
        return {k: v for k, v in found.items() if v}

    def _local_adapter(self) -> Path | None:
        path = Path(self.adapter).expanduser()
        return path if path.is_dir() else None

    def _tokenizer_source(self) -> tuple[str, str | None]:
        local = self._local_adapter()
        if local is not None and (local / "tokenizer_config.json").is_file():
            return str(local), None
        return self.name, self.revision

    def _load_model(self) -> Any:
        try:
            from peft import PeftModel
        except ImportError:
            raise MissingDependency("peft: models", "peft", "peft") from None
        base = super()._load_model()
        try:
            kwargs: dict[str, Any] = {"revision": self.adapter_revision} if self.adapter_revision else {}
            model = PeftModel.from_pretrained(base, self.adapter, **kwargs)
        except Exception as error:
            if not files_at_fault(error):
                raise
            raise load_error("adapter", self.adapter, error) from None
        return model.merge_and_unload() if self.merge else model

    def info(self) -> dict[str, Any]:
        local = self._local_adapter()
        return {
            **super().info(),
            "adapter": str(local.resolve()) if local else self.adapter,
            "adapter_revision": self.adapter_revision,
            "adapter_sha256": adapter_weights_sha256(local) if local else None,
            "merged": self.merge,
        }
