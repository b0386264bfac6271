"""Getting a verdict for every (pair, order): stored completions first, then judge calls in rounds.

A `Slot` is one pair of answers shown in one order. Round k sends attempt k of every slot still
without a verdict (attempt 0 with the judge's own decoding settings; a retry after an unparsable
completion re-samples with a new seed), all at once through the adapter so its concurrency and
rate limiting apply. Each completion is stored the moment it arrives, raw text included.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from model_adapters import Generation, Request
from model_adapters.interface import Message
from rolebench.cached_model import CachedModel
from rolebench.judge.config import JudgeConfig
from rolebench.judge.parse import Parser, Verdict, VerdictParseError
from rolebench.judge.store import judgment_key
from rolebench.results.provenance import now_iso
from rolebench.storage.records import RecordStore


@dataclass
class Slot:
    """One pair in one order, and the stored completions of its attempts so far (in order)."""

    pair_id: str
    order: str  # "model_first" | "baseline_first"
    messages: list[Message]
    attempts: list[dict[str, Any]] = field(default_factory=list)
    keys: dict[int, str] = field(default_factory=dict)  # cache key per attempt, computed once
    error: str | None = None  # the judge gave no completion (API error); not stored, so a re-run retries

    @property
    def verdict(self) -> Verdict | None:
        return next((a["verdict"] for a in self.attempts if a.get("verdict") is not None), None)

    def needs(self, attempt: int, max_attempts: int) -> bool:
        return (
            self.error is None
            and self.verdict is None
            and len(self.attempts) == attempt
            and attempt < max_attempts
        )


@dataclass
class CallStats:
    """What this invocation did: judge requests made, retries among them, errors, tokens, reparses,
    and the wall time spent waiting on the judge (first request sent to last completion received)."""

    requests: int = 0
    retries: int = 0
    errors: int = 0
    reparsed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calling_s: float = 0.0

    def describe(self) -> dict[str, Any]:
        return {**vars(self), "calling_s": round(self.calling_s, 3)}


def parse_completion(parser: Parser, text: str, labels: Sequence[str]) -> tuple[Verdict | None, str | None]:
    """(verdict, None) or (None, why it could not be parsed)."""
    try:
        return parser(text, labels), None
    except VerdictParseError as exc:
        return None, str(exc)


class JudgeCaller:
    """Settles every slot: loads stored attempts, then calls the judge for what is missing."""

    def __init__(
        self,
        judge: CachedModel,
        config: JudgeConfig,
        store: RecordStore,
        *,
        concurrency: int,
        reparse: bool = False,
        progress: bool = True,
    ) -> None:
        self.judge, self.config, self.store = judge, config, store
        self.concurrency, self.reparse, self.progress = concurrency, reparse, progress
        self.parser = config.parse()
        self.stats = CallStats()
        self.used: dict[str, dict[str, Any]] = {}  # every completion behind the verdicts, by key
        self._template_hash = config.template_hash()

    def key(self, slot: Slot, attempt: int) -> str:
        if attempt not in slot.keys:
            decoding = self.config.generation_config(attempt, concurrency=self.concurrency).decoding_key()
            slot.keys[attempt] = judgment_key(
                self.judge, self._template_hash, decoding, slot.messages, attempt
            )
        return slot.keys[attempt]

    def settle(self, slots: Sequence[Slot]) -> CallStats:
        """Give every slot a verdict, a final parse failure (all attempts unparsable) or an error."""
        while True:
            self._load_stored(slots)
            for attempt in range(self.config.max_attempts):
                due = [s for s in slots if s.needs(attempt, self.config.max_attempts)]
                if due:
                    self._call(due, attempt)
                    break
            else:
                return self.stats

    def usage(self) -> dict[str, int]:
        """Tokens and requests behind these verdicts, cached ones included (what the numbers cost)."""
        usages = [record.get("usage") or {} for record in self.used.values()]
        return {
            "requests": len(usages),
            "prompt_tokens": sum(int(u.get("prompt_tokens", 0)) for u in usages),
            "completion_tokens": sum(int(u.get("completion_tokens", 0)) for u in usages),
        }

    def _load_stored(self, slots: Sequence[Slot]) -> None:
        for attempt in range(self.config.max_attempts):
            due = [s for s in slots if s.needs(attempt, self.config.max_attempts)]
            if not due:
                continue
            keys = [self.key(s, attempt) for s in due]
            found = self.store.get_many(keys)
            for slot, key in zip(due, keys, strict=True):
                if key in found:
                    if key not in self.used:
                        self.used[key] = self._reparsed(key, found[key]) if self.reparse else found[key]
                    slot.attempts.append(self.used[key])

    def _reparsed(self, key: str, record: dict[str, Any]) -> dict[str, Any]:
        """Re-apply the current parser to a stored raw completion (no judge call); store a change."""
        verdict, problem = parse_completion(self.parser, record["raw"], self.config.labels)
        if verdict != record.get("verdict") or problem != record.get("parse_error"):
            record = {
                **record,
                "verdict": verdict,
                "parse_error": problem,
                "parser": self.config.parser,
                "reparsed": now_iso(),
            }
            self.store.put(key, record)
            self.stats.reparsed += 1
        return record

    def _call(self, due: list[Slot], attempt: int) -> None:
        """One request per distinct key (identical comparisons share a completion)."""
        config = self.config.generation_config(attempt, concurrency=self.concurrency)
        sharing: dict[str, list[Slot]] = {}
        for slot in due:
            sharing.setdefault(self.key(slot, attempt), []).append(slot)
        requests = [Request(id=key, messages=group[0].messages) for key, group in sharing.items()]
        desc = "judge" if attempt == 0 else f"judge retry {attempt}"
        started = time.perf_counter()
        with tqdm(total=len(requests), desc=desc, unit="req", disable=not self.progress) as bar:
            for request, generation in self.judge.adapter().generate(requests, config):
                self._receive(sharing.pop(request.id), request.id, generation, attempt)
                bar.update(1)
        self.stats.calling_s += time.perf_counter() - started
        for group in sharing.values():  # never loop forever on a backend that skipped a request
            for slot in group:
                slot.error = "the judge backend returned nothing for this request"
            self.stats.errors += 1

    def _receive(self, slots: list[Slot], key: str, generation: Generation, attempt: int) -> None:
        self.stats.requests += 1
        self.stats.retries += attempt > 0
        self.stats.prompt_tokens += generation.usage.prompt_tokens
        self.stats.completion_tokens += generation.usage.completion_tokens
        if generation.text is None:
            for slot in slots:
                slot.error = generation.error or "the judge returned no completion"
            self.stats.errors += 1
            return
        verdict, problem = parse_completion(self.parser, generation.text, self.config.labels)
        record = {
            "raw": generation.text,
            "verdict": verdict,
            "parse_error": problem,
            "parser": self.config.parser,
            "attempt": attempt,
            "usage": vars(generation.usage),
            "seconds": generation.seconds,
            "finish_reason": generation.finish_reason,
            "judge": self.judge.identity,
            "created": now_iso(),
        }
        self.store.put(key, record)
        self.used[key] = record
        for slot in slots:
            slot.attempts.append(record)
