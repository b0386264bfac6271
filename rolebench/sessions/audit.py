"""The session data's own audit (`rolebench data audit`): what RPBench-Auto's items repeat, and what of a
RoleBench role's session the single-turn test answers already hold.

- RPBench-Auto's characters and scenes (`same_name`, `same_greeting`, `same_item`): items that repeat an
  earlier item's character name, its greeting (the conversation's first line, what `baseline:greeting`
  answers every turn), or its whole setting (the system prompt a candidate gets); each counts the later
  items. A repeated item is one session counted twice.
- RoleBench's roles (`greeting_in_references`, `profile_in_references`): test items of the role (every
  split of the language) with a reference that holds the session's greeting verbatim, or a sentence of
  the role's profile (one of `PROFILE_TOKENS` tokens or more, `rolebench.data.audit.overlap_tokens`)
  verbatim: answers a model gets by repeating its opening or its character sheet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolebench.data.audit import overlap_tokens
from rolebench.data.layout import upstream_splits
from rolebench.data.samples import Sample, read_split, split_files_status
from rolebench.data.source import DataSource, source_for
from rolebench.errors import DataError
from rolebench.sessions.data import GREETINGS, ROLE_FILES, SessionItem, load_roles, load_rpbench
from rolebench.storage.jsonl import read_json
from rolebench.tasks.sessions import RPBENCH_DIR, SESSION_TASKS

PROFILE_TOKENS = 8  # a profile sentence this long found verbatim in a reference is not chance
_SENTENCE = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")
COUNTS: dict[str, str] = {
    "same_name": "repeats an earlier item's character name",
    "same_greeting": "repeats an earlier item's greeting",
    "same_item": "repeats an earlier item's whole setting",
    "greeting_in_references": "test items whose reference holds the greeting verbatim",
    "profile_in_references": f"test items whose reference holds a profile sentence ({PROFILE_TOKENS}+ tok.)",
}


@dataclass
class SessionAudit:
    """One session task's audit: the ids behind each of its counts, or why it was not made."""

    task: str
    items: int | None = None
    counts: dict[str, list[str]] = field(default_factory=dict)
    missing: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "counts": {name: len(ids) for name, ids in self.counts.items()},
            "ids": self.counts,
            "missing": self.missing,
        }


def _repeats(items: Sequence[SessionItem], key: Any) -> list[str]:
    seen: set[str] = set()
    found = []
    for item in items:
        value = key(item).strip()
        if value in seen:
            found.append(item.id)
        seen.add(value)
    return found


def audit_items(task: str, items: Sequence[SessionItem]) -> SessionAudit:
    """RPBench-Auto's items: the repeats (see the module docstring)."""
    return SessionAudit(
        task,
        len(items),
        {
            "same_name": _repeats(items, lambda i: i.name),
            "same_greeting": _repeats(items, lambda i: i.greeting),
            "same_item": _repeats(items, lambda i: i.system_prompt),
        },
    )


def profile_sentences(description: str) -> list[str]:
    """The sentences of a profile long enough that finding one verbatim is not chance."""
    parts = (p.strip() for p in _SENTENCE.split(description))
    return [p for p in parts if len(overlap_tokens(p)) >= PROFILE_TOKENS]


def audit_roles(
    task: str, descriptions: dict[str, str], greeting: str, samples: Iterable[Sample]
) -> SessionAudit:
    """RoleBench's roles (name -> description) against their test items' references (see the module
    docstring); `greeting`: the sessions' opening line."""
    sentences = {name: profile_sentences(text) for name, text in descriptions.items()}
    greeting_ids, profile_ids = [], []
    for sample in samples:
        if sample.role not in sentences:
            continue
        references = [r.strip() for r in sample.references]
        if any(greeting in r for r in references):
            greeting_ids.append(sample.id)
        if any(s in r for s in sentences[sample.role] for r in references):
            profile_ids.append(sample.id)
    return SessionAudit(
        task,
        len(descriptions),
        {"greeting_in_references": greeting_ids, "profile_in_references": profile_ids},
    )


def _test_samples(source: DataSource, language: str) -> list[Sample]:
    samples: list[Sample] = []
    for split in upstream_splits():
        local = source_for(split, source)
        if split.language != language:
            continue
        status = split_files_status(split.id, local)
        if status[split.file("test.jsonl")] and status[split.profiles]:  # what `read_split` needs
            samples += read_split(split, local)
    return samples


def _role_audit(task: str, source: DataSource, language: str) -> SessionAudit:
    path = source.path(ROLE_FILES[language], required=False)
    if path is None:
        return SessionAudit(task, missing=f"no role descriptions ({ROLE_FILES[language]} is not in the data)")
    try:
        load_roles(path.parents[1], language)  # the file as the sessions read it, or one line saying why not
    except DataError as exc:
        return SessionAudit(task, missing=exc.what)
    descriptions = {name: text.strip() for name, text in read_json(path).items()}
    return audit_roles(task, descriptions, GREETINGS[language], _test_samples(source, language))


def audit_sessions(source: DataSource) -> dict[str, SessionAudit]:
    """Every session task's audit: RPBench-Auto's from the package, RoleBench's roles from `source`."""
    found = {}
    for name, task in SESSION_TASKS.items():
        if task.source == "rpbench":
            found[name] = audit_items(name, load_rpbench(RPBENCH_DIR, task.kind))  # type: ignore[arg-type]
        else:
            found[name] = _role_audit(name, source, task.language)
    return found


def session_audit_lines(audits: Iterable[SessionAudit]) -> list[str]:
    """One line per session task: its items and each count (or why it was not made)."""
    lines = []
    for audit in audits:
        if audit.missing is not None:
            lines.append(f"{audit.task}: not audited: {audit.missing}")
            continue
        counts = ", ".join(f"{len(ids)} {COUNTS[name]}" for name, ids in audit.counts.items())
        lines.append(f"{audit.task} ({audit.items} items): {counts}")
    return lines
