"""What a result records about how it was made: the time, the command line, the package versions."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from importlib import metadata

PACKAGES = (
    "rolebench",
    "torch",
    "transformers",
    "peft",
    "accelerate",
    "aiohttp",
    "vllm",
    "llama_cpp_python",
    "lm_eval",
    "datasets",
    "huggingface_hub",
    "rapidfuzz",
    "jieba",
    "rouge_score",
    "rouge_chinese",
)


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def package_versions() -> dict[str, str]:
    found = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def command_line() -> str:
    return " ".join(["rolebench", *sys.argv[1:]])
