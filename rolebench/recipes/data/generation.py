"""Cached, concurrent, resumable generator calls shared by the data recipes.

A recipe turns its work into `Job`s (an id, chat messages, a seed) and `CachedGenerator.run` returns
the text of each. Every answer is stored in a `RecordStore` the moment it arrives, keyed by the
generator's identity (spec and options), the recipe stage, the hash of the prompt templates used,
the decoding settings and the exact messages; a rerun (after an interruption, or with more roles)
asks the generator only for what is missing and loads no model when nothing is. Concurrency and
batching are the adapter's (`GenerationConfig.concurrency` / `batch_size`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from model_adapters import GenerationConfig, Message, Request
from rolebench.cached_model import CachedModel
from rolebench.prompts.roleplay import template_hash
from rolebench.storage.records import RecordStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GeneratorSettings:
    """Which model generates, how, and where its answers are cached."""

    spec: str
    cache: Path
    options: dict[str, Any] = field(default_factory=dict)
    config: GenerationConfig = field(default_factory=GenerationConfig)
    progress: bool = True


@dataclass(frozen=True)
class Job:
    """One generator call: `id` is the caller's name for it, `seed` picks one of n samples."""

    id: str
    messages: list[Message]
    seed: int = 0


@dataclass
class CallStats:
    """What a stage cost: calls answered from the cache, new calls, failures, tokens of new calls."""

    cached: int = 0
    generated: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def line(self) -> str:
        return (
            f"{self.generated} generator calls ({self.cached} from the cache, {self.failed} failed), "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens"
        )


class CachedGenerator:
    """A model adapter behind a record store; the adapter is loaded only when something is missing."""

    def __init__(self, settings: GeneratorSettings, stage: str, templates: Sequence[str]) -> None:
        self.settings, self.stage = settings, stage
        self.prompt_hash = template_hash(*templates)
        self.store = RecordStore(settings.cache, "recipe_generations")
        try:
            self.model = CachedModel(settings.spec, settings.options, self.store)
        except BaseException:
            self.store.close()
            raise
        self.stats = CallStats()

    def identity(self) -> dict[str, Any]:
        """The generator as it enters cache keys and output metadata (never a secret)."""
        return self.model.identity

    def key(self, job: Job) -> str:
        config = replace(self.settings.config, seed=job.seed)
        return self.model.key("recipe", self.stage, self.prompt_hash, config.decoding_key(), job.messages)

    def run(self, jobs: Sequence[Job], desc: str) -> dict[str, str | None]:
        """The text of every job by id (None where the generator gave no answer; a rerun retries those)."""
        keys = {job.id: self.key(job) for job in jobs}
        stored = self.store.get_many(keys.values())
        texts: dict[str, str | None] = {jid: stored[k]["text"] for jid, k in keys.items() if k in stored}
        self.stats.cached += len(texts)
        by_seed: dict[int, list[Job]] = defaultdict(list)
        for job in jobs:
            if job.id not in texts:
                by_seed[job.seed].append(job)
        missing = sum(len(group) for group in by_seed.values())
        if not missing:
            return texts
        bar = tqdm(total=missing, desc=desc, unit="call", disable=not self.settings.progress)
        try:
            for seed, group in sorted(by_seed.items()):
                config = replace(self.settings.config, seed=seed)
                requests = [Request(id=job.id, messages=job.messages) for job in group]
                for request, generation in self.model.adapter().generate(requests, config):
                    texts[request.id] = generation.text
                    self._record(keys[request.id], generation)
                    bar.update(1)
        finally:
            bar.close()
        if self.stats.failed:
            log.warning(
                "%s: %d generator calls gave no answer; run again to retry them", desc, self.stats.failed
            )
        return texts

    def _record(self, key: str, generation: Any) -> None:
        if generation.text is None:
            self.stats.failed += 1
            return
        self.stats.generated += 1
        self.stats.prompt_tokens += generation.usage.prompt_tokens
        self.stats.completion_tokens += generation.usage.completion_tokens
        self.store.put(
            key,
            {
                "text": generation.text,
                "usage": vars(generation.usage),
                "finish_reason": generation.finish_reason,
            },
        )

    def close(self) -> None:
        self.model.close()
        self.store.close()

    def __enter__(self) -> CachedGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
