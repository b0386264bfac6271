"""Cached, concurrent, resumable generator calls shared by the data recipes.

A recipe turns its work into `Job`s (an id, chat messages, a seed) and `CachedGenerator.run` returns
the text of each, through the one cached generation loop (`rolebench.cached_model.CachedModel.complete`).
Every answer is stored in a `RecordStore` the moment it arrives, keyed by the
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

from model_adapters import Generation, GenerationConfig, Message, Request
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


def _record(generation: Generation) -> dict[str, Any]:
    """How a recipe's answer is stored: its text, tokens and why it stopped."""
    return {
        "text": generation.text,
        "usage": vars(generation.usage),
        "finish_reason": generation.finish_reason,
    }


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
        """The text of every job by id (None where the generator gave no answer; a rerun retries those).
        One call of the model's cached generation loop per sampling seed (`CachedModel.complete`)."""
        keys = {job.id: self.key(job) for job in jobs}
        by_seed: dict[int, dict[str, Request]] = defaultdict(dict)
        for job in jobs:
            by_seed[job.seed][keys[job.id]] = Request(id=job.id, messages=job.messages)
        records: dict[str, dict[str, Any]] = {}
        failed = 0
        for seed, calls in sorted(by_seed.items()):
            config = replace(self.settings.config, seed=seed)
            done = self.model.complete(
                calls, config, desc=desc, progress=self.settings.progress, to_record=_record
            )
            records.update(done.records)
            failed += done.failed
            self.stats.cached += done.cached
            self.stats.generated += len(done.fresh) - done.failed
            self.stats.prompt_tokens += done.prompt_tokens
            self.stats.completion_tokens += done.completion_tokens
        self.stats.failed += failed
        if failed:
            log.warning("%s: %d generator calls gave no answer; run again to retry them", desc, failed)
        return {job_id: records[key].get("text") for job_id, key in keys.items()}

    def close(self) -> None:
        self.model.close()
        self.store.close()

    def __enter__(self) -> CachedGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
