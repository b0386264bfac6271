"""Where judgments live: one SQLite `RecordStore` in the user cache dir, shared by every run.

A judgment record is one judge completion (raw text kept, verdict parsed from it) for one pair
of answers in one order at one attempt. Its key is the content hash of everything that decides
that completion: the judge's identity (scheme, model name and revision from `adapter.info()`),
the judge's prompt-template hash, its decoding settings, the exact messages (hence the exact
texts compared and their order) and the attempt number. So a re-run makes no judge call, another
judge or prompt never sees these verdicts, and an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_adapters import ModelAdapter, load_model, parse_spec
from model_adapters.interface import Message
from rolebench.storage.records import RecordStore, cache_dir, content_key

JUDGMENTS_FILE = "judgments.sqlite"
JUDGMENTS_TABLE = "judgments"
_INFO_KEY = "judge-info"


def open_judgment_store(directory: Path | None = None) -> RecordStore:
    return RecordStore((directory or cache_dir()) / JUDGMENTS_FILE, JUDGMENTS_TABLE)


def judgment_key(identity: dict[str, Any], template_hash: str, decoding: dict[str, Any],
                 messages: list[Message], attempt: int) -> str:
    """The cache key of one judge completion (see the module docstring)."""
    return content_key("judgment", identity, template_hash, decoding, messages, attempt)


class LazyJudge:
    """The judge adapter, loaded on first call only; its `info()` is remembered in the store so a
    fully cached run loads no model at all (the same rule as the generation store)."""

    def __init__(self, spec: str, options: dict[str, Any], store: RecordStore) -> None:
        self.spec, self.options, self.store = spec, options, store
        self.scheme, _ = parse_spec(spec)
        self._info_key = content_key(_INFO_KEY, spec, {k: str(v) for k, v in options.items()})
        self._adapter: ModelAdapter | None = None
        self.loaded = False

    def adapter(self) -> ModelAdapter:
        if self._adapter is None:
            self._adapter = load_model(self.spec, **self.options)
            self.loaded = True
            self.store.put(self._info_key, dict(self._adapter.info()))
        return self._adapter

    def info(self) -> dict[str, Any]:
        """For results: the live adapter's info when it was loaded (it may have learnt more, e.g. an
        API's system fingerprint), else the info remembered when it was first loaded."""
        if self._adapter is not None:
            return dict(self._adapter.info())
        return self._remembered()

    def _remembered(self) -> dict[str, Any]:
        stored = self.store.get(self._info_key)
        return stored if stored is not None else dict(self.adapter().info())

    def identity(self) -> dict[str, Any]:
        """What makes two judges the same judge: scheme, model name and revision, as `info()` gave
        them when the judge was first loaded (a stable key; per-response fingerprints stay out)."""
        info = self._remembered()
        return {"scheme": self.scheme, "name": info.get("name"), "revision": info.get("revision")}

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
