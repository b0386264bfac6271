"""A model behind a record store: identified by one rule, loaded only when something is missing.

Used by every stage that asks a model for text (evaluate's generations, the judge's verdicts, the
recipes' calls). The identity is `model_adapters.model_identity` (spec, output-changing options,
local weights' fingerprint; never transport settings), so the three stores agree on what "the same
model" means. A store key is that identity plus the caller's parts (decoding settings, messages,
...). The adapter's `info()` is remembered in the store, so a fully cached run loads no model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model_adapters import AdapterBase, ModelSpec, load_model, model_identity, request_meta_keys
from rolebench.storage.records import RecordStore, content_key

_INFO = "model-info"


def stored_info(store: RecordStore, identity: Mapping[str, Any]) -> dict[str, Any] | None:
    """The info a model of this identity gave when it was last loaded with this store (None: never)."""
    return store.get(content_key(_INFO, dict(identity)))


class CachedModel:
    """`spec` + `options` (validated at once) with a store; `adapter()` loads the model on first call."""

    def __init__(self, spec: str | ModelSpec, options: Mapping[str, Any], store: RecordStore) -> None:
        self.spec = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
        self.options = dict(options)
        self.identity = model_identity(self.spec, self.options)
        self.meta_keys = request_meta_keys(self.spec)
        self.store = store
        self._adapter: AdapterBase | None = None
        self._info_key = content_key(_INFO, self.identity)

    @property
    def loaded(self) -> bool:
        """Whether the model was loaded in this process (False when every answer came from the store)."""
        return self._adapter is not None

    def key(self, *parts: Any) -> str:
        """The store key of one record of this model: its identity plus the caller's `parts`."""
        return content_key(self.identity, *parts)

    def adapter(self) -> AdapterBase:
        if self._adapter is None:
            self._adapter = load_model(self.spec, **self.options)
            self.store.put(self._info_key, dict(self._adapter.info()))
        return self._adapter

    def info(self) -> dict[str, Any]:
        """The adapter's info: fresh (and remembered again) when it ran, e.g. with an API's fingerprint;
        else the info remembered when it was last loaded; else it is loaded now."""
        if self._adapter is not None:
            fresh = dict(self._adapter.info())
            self.store.put(self._info_key, fresh)
            return fresh
        stored = self.store.get(self._info_key)
        return stored if stored is not None else dict(self.adapter().info())

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
