"""A role's script and its dialogue pairs, the source of few-shot demonstrations.

Formats read (one JSON object a line):
- the released RoleBench script files `profiles-{eng,zh}/profiles-{eng,zh}-{role}.jsonl`: one
  utterance a line, `{"act_id": .., "diag_id": .., "role": SPEAKER, "content": TEXT}`; a dialogue
  pair is (the previous speaker's line, the role's reply) within one act;
- simple pair files: `{"question": .., "answer": ..}` or `{"user": .., "assistant": ..}` a line.

`ScriptLibrary` serves the demonstrations of one split: each role's script file (from the split's
data source, never a test or reference file) read once and indexed once (`rolebench.data.retrieval`),
then asked per question. `rolebench evaluate --elicitation few-shot-*` and the lm-eval task files'
few-shot sampler both use it; the RoleGPT recipe uses `dialogue_pairs` and the same retriever. A role
whose script gives no usable pair (an empty file, no line of the role, no reply of the role to another
speaker, every pair over `MAX_PAIR_CHARS`) is refused, naming the file: its items would otherwise be
answered zero-shot inside a run labelled few-shot. `evaluate` asks while building its plan, before any
model loads.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.data.retrieval import DemonstrationRetriever
from rolebench.data.source import DataSource, source_for
from rolebench.data.splits import SplitDef
from rolebench.errors import DataError
from rolebench.storage.jsonl import numbered_jsonl

PAIR_FIELDS = (("question", "answer"), ("user", "assistant"))
MAX_PAIR_CHARS = 1000  # a longer pair (prompt + reply) is never a demonstration: it would crowd the context


@dataclass(frozen=True)
class Utterance:
    speaker: str
    content: str
    act: str = ""


def read_script(path: Path) -> list[Utterance]:
    """Utterances of a released script file, in file order (a bad line: a DataError naming file and line)."""
    return [Utterance(*fields) for fields in _utterances(path, numbered_jsonl(path))]


def _utterances(path: Path, records: Iterable[tuple[int, dict[str, Any]]]) -> list[tuple[str, str, str]]:
    """(speaker, content, act) of each script line, stripped; a line without them is a DataError."""
    lines = []
    for number, rec in records:
        speaker, content = rec.get("role"), rec.get("content")
        if not isinstance(speaker, str) or not isinstance(content, str):
            raise DataError(
                "a script line needs string fields `role` and `content`",
                where=f"{path}:{number}",
                fix='write {"act_id": .., "diag_id": .., "role": SPEAKER, "content": TEXT} lines, '
                'or {"question": .., "answer": ..} pairs',
            )
        lines.append((speaker.strip(), content.strip(), str(rec.get("act_id", ""))))
    return lines


def _pair_fields(rec: dict[str, Any]) -> tuple[str, str] | None:
    for question, answer in PAIR_FIELDS:
        if isinstance(rec.get(question), str) and isinstance(rec.get(answer), str):
            return rec[question], rec[answer]
    return None


def _speaker_key(name: str) -> str:
    """Speaker names match case-insensitively, whitespace runs ignored (scripts write `JACK SPARROW`)."""
    return " ".join(name.split()).casefold()


def dialogue_pairs(path: Path, role: str, max_chars: int | None = None) -> list[tuple[str, str]]:
    """(prompt, the role's reply) pairs of a dialogue file in either supported format (its first line
    tells which), in file order; with `max_chars`, only pairs whose prompt and reply together are at
    most that long."""
    records = list(numbered_jsonl(path))
    if records and _pair_fields(records[0][1]) is not None:
        pairs = [p for p in (_pair_fields(r) for _, r in records) if p is not None]
        found = [(q.strip(), a.strip()) for q, a in pairs if q.strip() and a.strip()]
    else:
        script = _utterances(path, records)
        target = _speaker_key(role)
        is_role = [_speaker_key(speaker) == target for speaker, _, _ in script]
        found = [
            (script[i - 1][1], script[i][1])
            for i in range(1, len(script))
            if is_role[i]
            and not is_role[i - 1]
            and script[i - 1][2] == script[i][2]
            and script[i - 1][1]
            and script[i][1]
        ]
    return found if max_chars is None else [(q, a) for q, a in found if len(q) + len(a) <= max_chars]


def _why_no_pairs(path: Path, role: str, max_chars: int) -> str:
    """Why a script gives a role no dialogue pair (it gave none): empty, no line of the role, no line
    of the role answering another speaker, or every pair too long."""
    records = list(numbered_jsonl(path))
    if not records:
        return "the file is empty"
    if not dialogue_pairs(path, role):
        if _pair_fields(records[0][1]) is not None:
            return "it holds no (question, answer) pair with both texts non-empty"
        speakers = {_speaker_key(speaker) for speaker, _, _ in _utterances(path, records)}
        if _speaker_key(role) not in speakers:
            return f"it holds no line of {role!r} ({len(speakers)} other speakers)"
        return f"no line of {role!r} answers another speaker's line in the same act"
    return f"every pair is over {max_chars:,} characters (prompt and reply), too long for a demonstration"


def find_dialogue_file(folder: Path, role: str) -> Path | None:
    """`profiles-*-{role}.jsonl` in `folder` or in its `profiles-*/` subfolders (a RoleBench root)."""
    name = f"profiles-*-{glob.escape(role)}.jsonl"
    for pattern in (name, f"profiles-*/{name}"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None


@dataclass(frozen=True)
class RoleScript:
    """One role's script: where it was read from, its usable pairs and their index."""

    role: str
    file: str  # relative to the dataset root, e.g. profiles-eng/profiles-eng-Jack Sparrow.jsonl
    retriever: DemonstrationRetriever

    @property
    def pairs(self) -> int:
        return len(self.retriever.pairs)


class ScriptLibrary:
    """The script files of one split's roles: each read and indexed once, on first use."""

    def __init__(self, split: SplitDef, source: DataSource, max_pair_chars: int = MAX_PAIR_CHARS) -> None:
        self.split, self.source, self.max_pair_chars = split, source_for(split, source), max_pair_chars
        self._scripts: dict[str, RoleScript] = {}

    def script(self, role: str) -> RoleScript:
        """The role's script (a DataError naming the file and how to get it when it is missing)."""
        if role not in self._scripts:
            relpath = self.split.script_file(role)
            path = self.source.path(relpath, required=False)
            if path is None:
                raise DataError(
                    f"role {role!r} has no script file {relpath}, where few-shot demonstrations come from",
                    where=self.source.describe_location(),
                    fix="fetch the role scripts (`rolebench data download --to DIR` gets profiles-*/, then "
                    "--data-dir DIR), or evaluate zero-shot (--elicitation zero-shot, or --shots 0)",
                )
            pairs = dialogue_pairs(path, role, self.max_pair_chars)
            if not pairs:
                raise DataError(
                    f"role {role!r} has no usable dialogue pair for few-shot demonstrations: "
                    f"{_why_no_pairs(path, role, self.max_pair_chars)}",
                    where=str(path),
                    fix="repair the script (or remove it and fetch the released one with `rolebench data "
                    "download`), or evaluate zero-shot (--elicitation zero-shot, or --shots 0)",
                )
            self._scripts[role] = RoleScript(
                role, relpath, DemonstrationRetriever(pairs, self.split.language)
            )
        return self._scripts[role]

    def demonstrations(self, role: str, question: str, shots: int) -> list[tuple[str, str]]:
        """The `shots` pairs of the role's script best matching the question (fewer when it has fewer)."""
        return self.script(role).retriever.top(question.strip(), shots)

    def describe(self, roles: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Per role: its script file and how many usable pairs it holds."""
        return {
            role: {"file": self.script(role).file, "pairs": self.script(role).pairs} for role in sorted(roles)
        }
