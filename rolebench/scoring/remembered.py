"""Numbers that follow from a task's data and answers alone, remembered across runs by their content:
the floors' scores (`rolebench.scoring.floors`) and the copying shares behind `verbatim-references`
(`rolebench.scoring.flags.verbatim`).

The floors of a task depend on its items only (questions, descriptions, train answers, references,
raw answers), never on the model: every run of every model on the same items holds the same ones,
and `rolebench score` would compute them again under every protocol each time it runs (three floors
cost as much as scoring three models). So each such number is stored in `$ROLEBENCH_CACHE/scores.sqlite`
(the user cache dir, beside the judgments) under a key of everything that determines it: the sha256 of
its inputs, the protocol's description (`ScoringProtocol.describe`: tokenizers, library versions), and
`code_digest()`, the sha256 of the scoring code itself (every `.py` and `.c` file of
`rolebench/scoring`, and `model_adapters/baseline.py`), so that a change to any rule, scorer or floor
is never served an old number (the C accelerators give the same floats as the Python paths). A cache
that cannot be opened or written (a read-only home, a damaged file) is passed over: the numbers are
computed, as without it.
"""

from __future__ import annotations

import array
import functools
import hashlib
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rolebench.results.schema import SampleRecord
from rolebench.storage.records import RecordStore, cache_dir, content_key

SCORES_FILE = "scores.sqlite"
SCORES_TABLE = "scores"


@functools.cache
def code_digest() -> str:
    """sha256 of the code the remembered numbers come from (see the module docstring)."""
    import model_adapters.baseline

    folder = Path(__file__).parent
    files = sorted([*folder.glob("*.py"), *folder.glob("*.c")]) + [Path(model_adapters.baseline.__file__)]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def texts_digest(*columns: Sequence[str | None]) -> str:
    """sha256 of columns of texts (None apart from ""): per column, its length and every text's length
    (-1: None), which tell where each text ends, then its texts joined by one separator; so no two sets
    of columns share a digest. Several times faster than the canonical JSON of the same texts."""
    digest = hashlib.sha256()
    for column in columns:
        lengths = array.array("q", [len(column), *[-1 if t is None else len(t) for t in column]])
        digest.update(lengths.tobytes())
        digest.update("\x1f".join([t or "" for t in column]).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


ITEM_FIELDS = ("language", "question", "description", "raw_answer", "baseline", "train_answer")


def items_digest(records: Sequence[SampleRecord]) -> str:
    """sha256 of what a task's items hold besides the answers (every field the floors and the copying
    shares follow from, the references included): computed once per task, a part of their keys."""
    return texts_digest(
        *([getattr(r, field) for r in records] for field in ITEM_FIELDS),
        [str(len(r.references)) for r in records],
        [ref for r in records for ref in r.references],
    )


def remembered_key(*parts: Any) -> str:
    """The key of a remembered number: the scoring code's digest and `parts` (its inputs, or their
    digest, and how it is computed)."""
    return content_key(code_digest(), *parts)


class Remembered:
    """The store of remembered numbers, or nothing (every lookup misses) when it cannot be used."""

    def __init__(self, store: RecordStore | None) -> None:
        self.store = store

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        if self.store is None:
            return {}
        try:
            return self.store.get_many(keys)
        except sqlite3.Error:
            self.store = None
            return {}

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        if self.store is None:
            return
        try:
            self.store.put(key, dict(record))
        except sqlite3.Error:
            self.store = None


@contextmanager
def remembered() -> Iterator[Remembered]:
    """The shared store of remembered numbers for the time of a computation."""
    try:
        store: RecordStore | None = RecordStore(cache_dir() / SCORES_FILE, SCORES_TABLE)
    except (OSError, sqlite3.Error):
        store = None
    try:
        yield Remembered(store)
    finally:
        if store is not None:
            store.close()
