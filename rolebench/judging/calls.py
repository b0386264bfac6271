"""Getting a verdict for every (pair, order): stored completions first, then judge calls in rounds.

A `Slot` is one pair of answers shown in one order. Round k sends attempt k of every slot still
without a verdict (attempt 0 with the judge's own decoding settings; a retry after an unparsable
completion re-samples with a new seed), all at once through the model's cached generation loop
(`rolebench.cached_model.CachedModel.complete`), so the adapter's concurrency and rate limiting apply
and each completion is stored the moment it arrives, raw text included.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model_adapters import Generation, Request
from model_adapters.interface import Message
from rolebench.cached_model import CachedModel
from rolebench.judging.config import JudgeConfig
from rolebench.judging.parse import Parser, Verdict, VerdictParseError
from rolebench.judging.store import judgment_key
from rolebench.results.provenance import now_iso


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
    """Settles every slot: each attempt round through the model's one cached generation loop
    (`CachedModel.complete`: stored completions first, the judge asked for what is missing)."""

    def __init__(
        self,
        judge: CachedModel,
        config: JudgeConfig,
        *,
        concurrency: int,
        endpoint: str | None = None,
        reparse: bool = False,
        progress: bool = True,
    ) -> None:
        self.judge, self.config, self.endpoint = judge, config, endpoint
        self.concurrency, self.reparse, self.progress = concurrency, reparse, progress
        self.parser = config.parse()
        self.stats = CallStats()
        self.used: dict[str, dict[str, Any]] = {}  # every completion behind the verdicts, by key
        self._template_hash = config.template_hash()

    def key(self, slot: Slot, attempt: int) -> str:
        if attempt not in slot.keys:
            decoding = self.config.generation_config(attempt, concurrency=self.concurrency).decoding_key()
            slot.keys[attempt] = judgment_key(
                self.judge, self._template_hash, decoding, slot.messages, attempt, self.endpoint
            )
        return slot.keys[attempt]

    def settle(self, slots: Sequence[Slot]) -> CallStats:
        """Give every slot a verdict, a final parse failure (all attempts unparsable) or an error."""
        for attempt in range(self.config.max_attempts):
            due = [s for s in slots if s.needs(attempt, self.config.max_attempts)]
            if due:
                self._round(due, attempt)
        return self.stats

    def usage(self) -> dict[str, int]:
        """Tokens and requests behind these verdicts, cached ones included (what the numbers cost)."""
        usages = [record.get("usage") or {} for record in self.used.values()]
        return {
            "requests": len(usages),
            "prompt_tokens": sum(int(u.get("prompt_tokens", 0)) for u in usages),
            "completion_tokens": sum(int(u.get("completion_tokens", 0)) for u in usages),
        }

    def _round(self, due: list[Slot], attempt: int) -> None:
        """Attempt `attempt` of every slot due: one request per distinct key (identical comparisons share
        a completion); stored completions are re-parsed with `reparse`."""
        config = self.config.generation_config(attempt, concurrency=self.concurrency)
        calls = {self.key(slot, attempt): Request(id=slot.pair_id, messages=slot.messages) for slot in due}
        started = time.perf_counter()
        done = self.judge.complete(
            calls,
            config,
            desc="judge" if attempt == 0 else f"judge retry {attempt}",
            progress=self.progress,
            to_record=lambda generation: self._record(generation, attempt),
        )
        if done.fresh:
            self.stats.calling_s += time.perf_counter() - started
        self.stats.requests += len(done.fresh)
        self.stats.retries += len(done.fresh) if attempt > 0 else 0
        self.stats.errors += done.failed
        self.stats.prompt_tokens += done.prompt_tokens
        self.stats.completion_tokens += done.completion_tokens
        for slot in due:
            key = self.key(slot, attempt)
            record = done.records[key]
            if record.get("raw") is None:
                slot.error = record.get("error") or "the judge returned no completion"
                continue
            if key not in self.used:
                stored = key not in done.fresh
                self.used[key] = self._reparsed(key, record) if stored and self.reparse else record
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
            self.judge.store.put(key, record)
            self.stats.reparsed += 1
        return record

    def _record(self, generation: Generation, attempt: int) -> dict[str, Any]:
        """The stored record of one completion (raw text kept, verdict parsed from it)."""
        if generation.text is None:
            return {"raw": None, "error": generation.error or "the judge returned no completion"}
        verdict, problem = parse_completion(self.parser, generation.text, self.config.labels)
        return {
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
