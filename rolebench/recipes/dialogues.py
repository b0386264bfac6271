"""A role's script and dialogues: reading them, cutting profiles into segments, retrieving demonstrations.

Formats read (one JSON object a line):
- the released RoleBench script files `profiles-{eng,zh}/profiles-{eng,zh}-{role}.jsonl`: one
  utterance a line, `{"act_id": .., "diag_id": .., "role": SPEAKER, "content": TEXT}`; a dialogue
  pair is (the previous speaker's line, the role's reply) within one act;
- simple pair files: `{"question": .., "answer": ..}` or `{"user": .., "assistant": ..}` a line.
Plain-text profiles (.txt, .md, anything not .jsonl) are cut at line boundaries.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.errors import DataError
from rolebench.storage.jsonl import read_jsonl

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"\w+", re.UNICODE)
PAIR_FIELDS = (("question", "answer"), ("user", "assistant"))


def detect_language(*texts: str) -> str:
    """ "zh" when at least a fifth of the non-space characters are CJK ideographs, else "en"."""
    text = "".join("".join(texts).split())
    if not text:
        return "en"
    return "zh" if len(_CJK.findall(text)) * 5 >= len(text) else "en"


def words(text: str, language: str) -> list[str]:
    """Retrieval tokens: jieba words for Chinese, lower-cased word characters for English."""
    if language == "zh":
        import jieba

        jieba.setLogLevel(60)
        return [w for w in jieba.lcut(text) if _WORD.search(w)]
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Utterance:
    speaker: str
    content: str
    act: str = ""


def read_script(path: Path) -> list[Utterance]:
    """Utterances of a released script file, in file order."""
    lines = []
    for number, rec in enumerate(read_jsonl(path), 1):
        speaker, content = rec.get("role"), rec.get("content")
        if not isinstance(speaker, str) or not isinstance(content, str):
            raise DataError(
                "a script line needs string fields `role` and `content`",
                where=f"{path}:{number}",
                fix='write {"act_id": .., "diag_id": .., "role": SPEAKER, "content": TEXT} lines, '
                'or {"question": .., "answer": ..} pairs',
            )
        lines.append(Utterance(speaker.strip(), content.strip(), str(rec.get("act_id", ""))))
    return lines


def _pair_fields(rec: dict[str, Any]) -> tuple[str, str] | None:
    for question, answer in PAIR_FIELDS:
        if isinstance(rec.get(question), str) and isinstance(rec.get(answer), str):
            return rec[question], rec[answer]
    return None


def dialogue_pairs(path: Path, role: str) -> list[tuple[str, str]]:
    """(prompt, the role's reply) pairs of a dialogue file in either supported format."""
    records = list(read_jsonl(path))
    pairs = [p for p in (_pair_fields(r) for r in records) if p is not None]
    if pairs:
        return [(q.strip(), a.strip()) for q, a in pairs if q.strip() and a.strip()]
    script = read_script(path)
    found = []
    for previous, current in zip(script, script[1:], strict=False):
        if (
            current.speaker == role
            and previous.speaker != role
            and previous.act == current.act
            and previous.content
            and current.content
        ):
            found.append((previous.content, current.content))
    return found


def find_dialogue_file(folder: Path, role: str) -> Path | None:
    """`profiles-*-{role}.jsonl` in `folder` or in its `profiles-*/` subfolders (a RoleBench root)."""
    name = f"profiles-*-{glob.escape(role)}.jsonl"
    for pattern in (name, f"profiles-*/{name}"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None


class DemonstrationRetriever:
    """BM25+ over the prompts of a role's dialogue pairs (the paper's retriever is unstated).

    rank_bm25's `BM25Plus` keeps idf positive in small corpora, where Okapi's idf is zero or floored.
    """

    def __init__(self, pairs: Sequence[tuple[str, str]], language: str) -> None:
        from rank_bm25 import BM25Plus

        self.pairs, self.language = list(pairs), language
        corpus = [words(q, language) or ["_"] for q, _ in self.pairs]
        self._bm25 = BM25Plus(corpus) if corpus else None

    def top(self, query: str, k: int) -> list[tuple[str, str]]:
        """The k best pairs for `query`, best first (ties in file order)."""
        if self._bm25 is None or k <= 0:
            return []
        scores = self._bm25.get_scores(words(query, self.language) or ["_"])
        order = sorted(range(len(self.pairs)), key=lambda i: (-scores[i], i))
        return [self.pairs[i] for i in order[:k]]


def profile_lines(path: Path) -> list[str]:
    """A profile as lines: `SPEAKER: TEXT` for a script (.jsonl), the non-empty lines of a text file."""
    if not path.is_file():
        raise DataError(
            f"profile file {path} does not exist",
            where="--profile",
            fix="give a plain-text profile or a profiles-*-{role}.jsonl script",
        )
    if path.suffix == ".jsonl":
        return [f"{u.speaker}: {u.content}" for u in read_script(path) if u.content]
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def segments(lines: Sequence[str], max_chars: int) -> list[str]:
    """Pack lines greedily into segments of at most `max_chars` characters (a longer line is cut)."""
    if max_chars < 1:
        raise DataError("segment size must be at least 1 character", where="--segment-chars")
    pieces = [line[i : i + max_chars] for line in lines for i in range(0, len(line), max_chars)]
    result: list[str] = []
    current: list[str] = []
    size = 0
    for piece in pieces:
        if current and size + 1 + len(piece) > max_chars:
            result.append("\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += len(piece) + (1 if size else 0)
    if current:
        result.append("\n".join(current))
    return result
