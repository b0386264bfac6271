"""RoleGPT: answers to general instructions in role, the way RoleBench's general data was made.

Each (role, instruction) gets the RoleGPT system prompt and few-shot "dialogue engineering"
(`rolebench.prompts.roleplay.role_messages(demonstrations=...)`): the `shots` dialogue pairs of the
role most similar to the instruction (`rolebench.data.retrieval`, the retriever `rolebench evaluate
--elicitation` uses, over the role's `profiles-*-{role}.jsonl`) become earlier user/assistant turns.
`n` answers per pair (seeds 0..n-1) are the references (`generated`); one more (seed n) is the
baseline answer, written to a second file, like the released `rolegpt_baseline.jsonl`. A role
without a dialogue file is answered zero-shot.
"""

from __future__ import annotations

import difflib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.data.joins import QUESTION_FIELDS
from rolebench.data.retrieval import DemonstrationRetriever
from rolebench.data.scripts import MAX_PAIR_CHARS, dialogue_pairs, find_dialogue_file
from rolebench.errors import ConfigError, DataError
from rolebench.prompts.roleplay import SYSTEM_TEMPLATES, role_messages
from rolebench.recipes.data.dialogues import detect_language
from rolebench.recipes.data.generation import CachedGenerator, GeneratorSettings, Job
from rolebench.storage.files import write_jsonl_atomic
from rolebench.storage.jsonl import read_jsonl

log = logging.getLogger(__name__)
STAGE = "rolegpt"


@dataclass(frozen=True)
class RoleGPTOptions:
    """What `rolebench recipe rolegpt` was asked to do."""

    instructions: Path
    roles: tuple[str, ...]
    desc: Path
    out: Path
    generator: GeneratorSettings
    baseline_out: Path | None = None  # None: no baseline answer
    dialogues: Path | None = None
    shots: int = 3
    n: int = 5
    language: str | None = None  # None: detected per role from its description
    limit: int | None = None
    max_demo_chars: int = MAX_PAIR_CHARS


def read_instructions(path: Path, limit: int | None = None) -> list[str]:
    """Instruction texts (field `instruction` or `question`, plus `input` when present), as written."""
    if not path.is_file():
        raise DataError(f"instructions file {path} does not exist", where="--instructions")
    found = []
    for number, rec in enumerate(read_jsonl(path), 1):
        text = next((rec[f] for f in QUESTION_FIELDS if isinstance(rec.get(f), str)), None)
        if text is None:
            raise DataError(
                f"an instruction needs one of the fields {QUESTION_FIELDS}", where=f"{path}:{number}"
            )
        extra = rec.get("input")
        found.append(f"{text}\n{extra}" if isinstance(extra, str) and extra.strip() else text)
        if limit is not None and len(found) >= limit:
            break
    return found


def read_descriptions(path: Path, roles: tuple[str, ...]) -> dict[str, str]:
    """The description of each role from a desc.json file ({role: description})."""
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"role descriptions {path} do not exist", where="--desc") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", where=str(path)) from None
    if not isinstance(table, dict):
        raise DataError("role descriptions must be a JSON object {role: description}", where=str(path))
    for role in roles:
        if role not in table:
            close = difflib.get_close_matches(role, list(table), n=1)
            raise ConfigError(
                f"no description for role {role!r} in {path}",
                where="--roles",
                fix=(f"did you mean {close[0]!r}? " if close else "")
                + "add it with `rolebench recipe describe-role`",
            )
    return {role: str(table[role]) for role in roles}


def retriever_for(options: RoleGPTOptions, role: str, language: str) -> DemonstrationRetriever | None:
    if options.dialogues is None or options.shots == 0:
        return None
    path = find_dialogue_file(options.dialogues, role)
    if path is None:
        log.warning(
            "no profiles-*-%s.jsonl under %s: %s is answered zero-shot", role, options.dialogues, role
        )
        return None
    return DemonstrationRetriever(dialogue_pairs(path, role, options.max_demo_chars), language)


def build_jobs(options: RoleGPTOptions, instructions: list[str], descriptions: dict[str, str]) -> list[Job]:
    """One job per (role, instruction, seed); seeds 0..n-1 are references, seed n the baseline."""
    seeds = options.n + (1 if options.baseline_out is not None else 0)
    jobs = []
    for r, role in enumerate(options.roles):
        language = options.language or detect_language(role, descriptions[role])
        retriever = retriever_for(options, role, language)
        for i, question in enumerate(instructions):
            demos = retriever.top(question, options.shots) if retriever is not None else []
            messages = role_messages(role, descriptions[role], question, language, demonstrations=demos)
            jobs += [Job(f"{r}/{i}/{seed}", messages, seed=seed) for seed in range(seeds)]
    return jobs


def collect(
    options: RoleGPTOptions, instructions: list[str], texts: dict[str, str | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Reference rows and baseline rows, in (role, instruction) order; unanswered pairs are left out."""
    rows, baselines = [], []
    for r, role in enumerate(options.roles):
        for i, question in enumerate(instructions):
            answers = [texts.get(f"{r}/{i}/{seed}") for seed in range(options.n)]
            answers = [a.strip() for a in answers if a and a.strip()]
            if answers:
                rows.append({"role": role, "question": question, "generated": answers})
            baseline = texts.get(f"{r}/{i}/{options.n}") if options.baseline_out is not None else None
            if baseline and baseline.strip():
                baselines.append({"role": role, "question": question, "generated": [baseline.strip()]})
    return rows, baselines


def run_rolegpt(options: RoleGPTOptions) -> str:
    """Generate (or reuse from the cache) every answer and write the outputs; returns a summary line."""
    if options.n < 1 or options.shots < 0:
        raise ConfigError("--n must be at least 1 and --shots at least 0")
    if not options.roles:
        raise ConfigError("no roles given", where="--roles")
    instructions = read_instructions(options.instructions, options.limit)
    descriptions = read_descriptions(options.desc, options.roles)
    jobs = build_jobs(options, instructions, descriptions)
    with CachedGenerator(options.generator, STAGE, tuple(SYSTEM_TEMPLATES.values())) as generator:
        texts = generator.run(jobs, desc="rolegpt")
        calls = generator.stats.line()
    rows, baselines = collect(options, instructions, texts)
    write_jsonl_atomic(options.out, rows)
    if options.baseline_out is not None:
        write_jsonl_atomic(options.baseline_out, baselines)
    return (
        f"{len(rows)} of {len(options.roles) * len(instructions)} (role, instruction) pairs answered, "
        f"{len(baselines)} baseline answers; {calls}"
    )
