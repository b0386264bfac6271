"""What identifies a transformers model given in memory (`HFAdapter.from_loaded`), where no files name it:
digests of its weights and buffers, of its tokenizer and of its configs."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from model_adapters.chat import text_sha256


def config_dict(config: Any) -> dict[str, Any]:
    """A transformers config as the settings it holds (its library version and path aside: neither
    changes an answer, and the path of the same weights may differ)."""
    if config is None or not hasattr(config, "to_dict"):
        return {}
    found: dict[str, Any] = config.to_dict()
    return {
        k: v for k, v in found.items() if k not in ("transformers_version", "_name_or_path", "_commit_hash")
    }


def loaded_digests(torch: Any, model: Any, tokenizer: Any) -> dict[str, str | None]:
    """A digest of every weight and buffer of `model`, of the tokenizer's vocabulary and chat template, of
    its special tokens, and of the model's config and generation_config."""
    digest = hashlib.blake2b(digest_size=16)
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(str(tensor.dtype).encode())
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    vocab = sorted(tokenizer.get_vocab().items())
    special = getattr(tokenizer, "special_tokens_map", {}) or {}
    configs = {name: config_dict(getattr(model, name, None)) for name in ("config", "generation_config")}
    return {
        "weights_digest": digest.hexdigest(),
        "tokenizer_sha256": text_sha256(repr(vocab) + str(tokenizer.chat_template or "")),
        "special_tokens_sha256": text_sha256(json.dumps(special, sort_keys=True, default=str)),
        "configs_sha256": text_sha256(json.dumps(configs, sort_keys=True, default=str)),
    }
