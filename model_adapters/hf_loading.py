"""Loading a transformers model for `hf:` (and `peft:`): the libraries, the device map, where its chat
template was read from, and one line for a load that failed (no such folder, damaged weights, no network
and not in the local cache, anything else the files caused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_adapters.errors import ConfigError, MissingDependency, ModelError, first_line
from model_adapters.files import damaged_weights
from model_adapters.network import offline
from model_adapters.spec import missing_local_path


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


def load_error(what: str, name: str, error: BaseException) -> ModelError:
    """The one line for a `what` (model, tokenizer, adapter) of `name` that failed to load with `error`."""
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
            f"cannot load the {what} of {name!r}: the Hub cannot be reached and it is not in the local cache",
            where="--model",
            fix="connect to the network, or give a local folder (hf:PATH)",
        )
    return ModelError(
        f"cannot load the {what} of {name!r}: {first_line(error)}",
        where="--model",
        fix="check the id, path and revision",
    )


def device_kwargs(torch: Any, device: str) -> dict[str, Any]:
    """`from_pretrained`'s device arguments for the `device` option (auto: every visible GPU, else CPU)."""
    device = device.lower()
    if device == "auto":
        return {"device_map": "auto"} if torch.cuda.is_available() else {}
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(
            f"device={device} but no CUDA GPU is visible",
            where="--model-args",
            fix="use device=cpu or device=auto",
        )
    return {} if device == "cpu" else {"device_map": device}


def template_source(name: str) -> str:
    """Where the chat template of the tokenizer at `name` was read from, as the user can find it."""
    folder = Path(name).expanduser()
    if not folder.is_dir():
        return f"the chat template of {name}"
    for file in ("chat_template.jinja", "chat_template.json", "tokenizer_config.json"):
        if (folder / file).is_file():
            return f"the chat template in {folder / file}"
    return f"the chat template of {folder}"
