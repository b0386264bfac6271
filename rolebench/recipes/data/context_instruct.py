"""Context-Instruct: role-specific questions, factualness labels and answers from a role's profile.

The profile (a plain-text profile or a released script file) is cut into segments; each segment is
one script-based request, and `agnostic_requests` more requests (seeds 0..k-1) ask script-agnostic
questions from the role's description alone. Every generation is parsed into items; low-factualness
and malformed items are dropped, then near-duplicate questions (ROUGE-L F against an already kept
question at or above the threshold, via `rolebench.scoring`) are dropped in generation order. The
output is role-specific rows in the RoleBench schema: `{"role", "question", "generated": [answer],
"type": ["script_based" | "script_agnostic"]}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigError
from rolebench.prompts.roleplay import render
from rolebench.recipes.data.dialogues import detect_language, profile_lines, segments
from rolebench.recipes.data.generation import CachedGenerator, GeneratorSettings, Job
from rolebench.recipes.data.qa_parse import QAItem, parse_items
from rolebench.storage.files import write_jsonl_atomic

STAGE = "context-instruct"
TEMPLATES = {
    "script_based": "context_instruct_script_based.j2",
    "script_agnostic": "context_instruct_script_agnostic.j2",
}
ALL_TEMPLATES = (*TEMPLATES.values(), "context_instruct_prompt.j2")


@dataclass(frozen=True)
class ContextInstructOptions:
    """What `rolebench recipe context-instruct` was asked to do."""

    role: str
    profile: Path
    out: Path
    generator: GeneratorSettings
    description: str = ""
    language: str | None = None  # None: detected from the profile
    segment_chars: int = 3000
    max_segments: int | None = None
    n_questions: int = 10
    agnostic_requests: int = 1
    dedup_threshold: float = 0.7


@dataclass
class ContextInstructReport:
    segments: int = 0
    calls: int = 0
    parsed: int = 0
    high: int = 0
    kept: int = 0
    calls_line: str = ""

    def line(self) -> str:
        return (
            f"{self.segments} segments, {self.calls} requests: {self.parsed} items parsed, "
            f"{self.high} high factualness, {self.kept} kept after de-duplication; {self.calls_line}"
        )


def check_options(options: ContextInstructOptions) -> None:
    if not 0.0 < options.dedup_threshold <= 1.0:
        raise ConfigError(
            f"de-duplication threshold {options.dedup_threshold} is not in (0, 1]",
            where="--dedup-threshold",
            fix="use e.g. 0.7 (the default)",
        )
    if options.n_questions < 1 or options.agnostic_requests < 0:
        raise ConfigError("--questions must be at least 1 and --agnostic-requests at least 0")
    if options.agnostic_requests and not options.description.strip():
        raise ConfigError(
            "script-agnostic requests need the role's description",
            where="--description / --desc",
            fix="give one, or set --agnostic-requests 0",
        )


def build_jobs(options: ContextInstructOptions, language: str) -> tuple[list[Job], int]:
    """Script-based jobs (one per segment) then script-agnostic jobs; the ids carry the type."""
    pieces = segments(profile_lines(options.profile), options.segment_chars)[: options.max_segments]
    common = {"role": options.role, "n_questions": options.n_questions, "language": language}
    jobs = []
    for index, segment in enumerate(pieces):
        text = render(TEMPLATES["script_based"], segment=segment, **common)
        jobs.append(Job(f"script_based/{index}", [{"role": "user", "content": text}]))
    agnostic = render(TEMPLATES["script_agnostic"], description=options.description.strip(), **common)
    for seed in range(options.agnostic_requests):
        jobs.append(Job(f"script_agnostic/{seed}", [{"role": "user", "content": agnostic}], seed=seed))
    return jobs, len(pieces)


def deduplicate(
    items: Sequence[tuple[str, QAItem]], threshold: float, language: str
) -> list[tuple[str, QAItem]]:
    """Keep an item unless its question's ROUGE-L F against a kept question reaches `threshold`."""
    from rolebench.scoring.protocols import get_protocol

    protocol = get_protocol("rolebench")
    kept: list[tuple[str, QAItem]] = []
    seen: set[str] = set()
    for kind, item in items:
        normal = " ".join(item.question.lower().split())
        if normal in seen:
            continue
        questions = [q.question for _, q in kept]
        if questions and protocol.score(item.question, questions, language) >= threshold:
            continue
        seen.add(normal)
        kept.append((kind, item))
    return kept


def rows_for(role: str, kept: Sequence[tuple[str, QAItem]]) -> list[dict[str, Any]]:
    return [
        {"role": role, "question": item.question, "generated": [item.response], "type": [kind]}
        for kind, item in kept
    ]


def run_context_instruct(options: ContextInstructOptions) -> ContextInstructReport:
    """Generate (or reuse from the cache), filter, de-duplicate and write the role's rows."""
    check_options(options)
    language = options.language or detect_language("\n".join(profile_lines(options.profile)[:200]))
    jobs, n_segments = build_jobs(options, language)
    report = ContextInstructReport(segments=n_segments, calls=len(jobs))
    with CachedGenerator(options.generator, STAGE, ALL_TEMPLATES) as generator:
        texts = generator.run(jobs, desc=f"context-instruct {options.role}")
        report.calls_line = generator.stats.line()
    candidates: list[tuple[str, QAItem]] = []
    for job in jobs:
        items = parse_items(texts.get(job.id) or "")
        report.parsed += len(items)
        candidates += [(job.id.split("/")[0], item) for item in items if item.is_high]
    report.high = len(candidates)
    kept = deduplicate(candidates, options.dedup_threshold, language)
    report.kept = len(kept)
    write_jsonl_atomic(options.out, rows_for(options.role, kept))
    return report
