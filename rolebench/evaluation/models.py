"""The model an evaluation asks (`ModelHandle`), from the Python API's `model` argument: a spec string, a
transformers `(model, tokenizer)` held in memory, or an object implementing the adapter protocol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model_adapters import ModelAdapter
from rolebench.adapter_protocol import checked_info
from rolebench.cached_model import CachedModel
from rolebench.errors import ConfigError, ConfigTypeError, kind_of
from rolebench.storage.records import RecordStore


@dataclass
class ModelHandle:
    """The model a run asks: a spec loaded when an answer is missing, or an adapter given in memory."""

    spec: str
    options: dict[str, Any] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)
    adapter: ModelAdapter | None = None

    def cached(self, store: RecordStore) -> CachedModel:
        if self.adapter is None:
            return CachedModel(self.spec, self.options, store)
        return CachedModel.given(self.adapter, self.identity, store)


IN_MEMORY_OPTIONS = frozenset({"apply_chat_template"})  # the hf: options a model in memory honours
PAIR_FIX = "pass a transformers model and its tokenizer as (model, tokenizer), or a spec string"


def _transformers_pair(model: Any, tokenizer: Any) -> None:
    """A ConfigTypeError unless `(model, tokenizer)` look like a transformers model and its tokenizer."""
    for what, value, needs in (
        ("model", model, ("config", "generate", "state_dict")),
        ("tokenizer", tokenizer, ("decode", "get_vocab", "apply_chat_template")),
    ):
        lacking = [name for name in needs if not hasattr(value, name)]
        if lacking:
            raise ConfigTypeError(
                f"the {what} of the (model, tokenizer) pair is {kind_of(value)}, which has no {lacking[0]}",
                where="rolebench.evaluate(model=...)",
                fix=PAIR_FIX,
            )


def in_memory_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The `model_args` of a (model, tokenizer) pair: what it honours; dtype, device and the other loading
    options cannot change a model that is loaded already, so they are refused, never recorded unused."""
    if not isinstance(options, Mapping):
        raise ConfigTypeError(
            f"model_args is {kind_of(options)}", where="rolebench.evaluate", fix="pass a dict of options"
        )
    ignored = sorted(set(options) - IN_MEMORY_OPTIONS)
    if ignored:
        raise ConfigError(
            f"model_args {', '.join(map(str, ignored))} cannot apply to a model given in memory (it is "
            "loaded already)",
            where="rolebench.evaluate",
            fix="load, move or cast the model yourself before passing it (only apply_chat_template applies)",
        )
    return dict(options)


def model_handle(model: Any, options: Any) -> tuple[str, ModelHandle | None]:
    """The spec a model argument records, and the model in memory when it is one (None: a spec). A model
    in memory is checked here: a bad pair, an adapter whose `spec` or `info()` is not what the protocol
    says, or `model_args` it would ignore are a ConfigTypeError / ConfigError naming them."""
    if isinstance(model, str):
        return model, None
    if isinstance(model, tuple) and len(model) == 2:
        from model_adapters.hf import HFAdapter, HFOptions

        _transformers_pair(*model)
        honoured = in_memory_options(options or {})
        adapter = HFAdapter.from_loaded(
            model[0], model[1], HFOptions.parse(honoured, "hf:", where="model_args")
        )
        return adapter.spec, ModelHandle(adapter.spec, identity=adapter.fingerprint_loaded(), adapter=adapter)
    if isinstance(model, ModelAdapter):
        if options:
            raise ConfigError(
                f"model_args cannot apply to a model object ({type(model).__name__}): it is built already",
                where="rolebench.evaluate",
                fix="configure the object itself, and drop model_args",
            )
        if not isinstance(model.spec, str) or not model.spec.strip():
            raise ConfigTypeError(
                f"the model's spec is {kind_of(model.spec)}, not a name",
                where="rolebench.evaluate(model=...)",
                fix="give the adapter object a `spec` attribute: a short text naming the model",
            )
        info = checked_info(model.info(), model.spec)
        described = getattr(model, "identity", None)
        found = (
            checked_info(described(), model.spec, "identity()")
            if callable(described)
            else {"spec": model.spec, "info": info}
        )
        return model.spec, ModelHandle(model.spec, identity=found, adapter=model)
    shape = f" of {len(model)}" if isinstance(model, tuple) else ""
    raise ConfigTypeError(
        "model must be a spec string, a (model, tokenizer) pair of transformers objects, or an object with "
        f"the adapter protocol (spec, info(), generate(), close()), not {kind_of(model)}{shape}",
        where="rolebench.evaluate(model=...)",
        fix=PAIR_FIX,
    )
