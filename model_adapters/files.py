"""What identifies local files without reading a model: checksums and cheap fingerprints of weights."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def files_fingerprint(paths: Iterable[Path]) -> dict[str, list[int]]:
    """`{name: [size, mtime_ns]}` of local files: cheap, and it changes whenever a file is replaced."""
    found: dict[str, list[int]] = {}
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        found[path.name] = [stat.st_size, stat.st_mtime_ns]
    return dict(sorted(found.items()))


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")
# what turns messages into tokens and tokens into text besides the weights: the tokenizer's files, chat
# templates (a `chat_template.jinja` beside the configs, or more under `additional_chat_templates/`) and
# a model's own code (trust_remote_code); `*config.json` (tokenizer_config, generation_config) are weights'
TOKENIZER_FILES = frozenset(
    {
        "tokenizer.json",
        "tokenizer.model",
        "spiece.model",
        "sentencepiece.bpe.model",
        "vocab.json",
        "vocab.txt",
        "merges.txt",
        "special_tokens_map.json",
        "added_tokens.json",
        "chat_template.json",
    }
)
TOKENIZER_SUFFIXES = (".jinja", ".py")


def weights_fingerprint(location: str) -> dict[str, list[int]]:
    """The fingerprint of a local model folder's weights and configs, or of a local file; {} for a Hub id."""
    path = Path(location).expanduser()
    if path.is_file():
        return files_fingerprint([path])
    if not path.is_dir():
        return {}
    wanted = [
        p
        for p in path.iterdir()
        if p.is_file() and (p.suffix in WEIGHT_SUFFIXES or p.name.endswith("config.json"))
    ]
    return files_fingerprint(wanted)


def tokenizer_fingerprint(location: str) -> dict[str, list[int]]:
    """The fingerprint of a local model folder's tokenizer files, chat templates and code ({} for a Hub id
    or a single file): editing `chat_template.jinja` changes the answers as much as new weights do."""
    path = Path(location).expanduser()
    if not path.is_dir():
        return {}
    templates = path / "additional_chat_templates"
    extra = sorted(templates.glob("*.jinja")) if templates.is_dir() else []
    wanted = [
        p
        for p in path.iterdir()
        if p.is_file() and (p.name in TOKENIZER_FILES or p.suffix in TOKENIZER_SUFFIXES)
    ]
    found = files_fingerprint(wanted)
    found.update({f"{templates.name}/{k}": v for k, v in files_fingerprint(extra).items()})
    return dict(sorted(found.items()))


def safetensors_damage(path: Path) -> str | None:
    """What is wrong with a .safetensors file's layout (empty, cut short, a header that is not JSON), or
    None when its header and the data it announces are all there; read without loading a tensor."""
    size = path.stat().st_size
    if size < 8:
        return "empty" if size == 0 else f"{size} bytes, shorter than a header"
    with open(path, "rb") as handle:
        length = int.from_bytes(handle.read(8), "little")
        if 8 + length > size:
            return f"cut short: {size:,} bytes, its header alone announces {8 + length:,}"
        try:
            header = json.loads(handle.read(length))
        except (UnicodeDecodeError, ValueError):
            return "its header is not JSON"
    ends = (
        [t.get("data_offsets", [0, 0])[1] for t in header.values() if isinstance(t, dict)]
        if isinstance(header, dict)
        else []
    )
    needed = 8 + length + max(ends, default=0)
    return f"cut short: {size:,} bytes of {needed:,}" if size < needed else None


def damaged_weights(location: str) -> list[tuple[Path, str]]:
    """The .safetensors files of a local model folder (or the file itself) that are damaged, with why."""
    path = Path(location).expanduser()
    files = (
        sorted(path.glob("*.safetensors"))
        if path.is_dir()
        else [path]
        if path.suffix == ".safetensors"
        else []
    )
    found = []
    for file in files:
        try:
            damage = safetensors_damage(file)
        except OSError as error:
            damage = error.strerror or type(error).__name__
        if damage:
            found.append((file, damage))
    return found
