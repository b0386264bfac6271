"""Where judgments live: one SQLite `RecordStore` in the user cache dir, shared by every run.

A judgment record is one judge completion (raw text kept, verdict parsed from it) for one pair
of answers in one order at one attempt. Its key (`judgment_key`) is the judge's identity (the one
rule of `rolebench.cached_model`: spec, output-changing options such as dtype, local weights), the
endpoint it answers at (a base URL: another server is another judge, so a server that answered
nonsense never stands in for another), the judge's prompt-template hash, its decoding settings, the
exact messages (hence the exact texts compared and their order) and the attempt number. So a re-run
makes no judge call, another judge or prompt never sees these verdicts, and an interrupted run resumes
where it stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_adapters import Message
from rolebench.cached_model import CachedModel
from rolebench.storage.records import RecordStore, cache_dir

JUDGMENTS_FILE = "judgments.sqlite"
JUDGMENTS_TABLE = "judgments"


def open_judgment_store(directory: Path | None = None) -> RecordStore:
    return RecordStore((directory or cache_dir()) / JUDGMENTS_FILE, JUDGMENTS_TABLE)


def judgment_key(
    judge: CachedModel,
    template_hash: str,
    decoding: dict[str, Any],
    messages: list[Message],
    attempt: int,
    endpoint: str | None = None,
) -> str:
    """The cache key of one judge completion (see the module docstring; a judge without a base URL keeps
    the keys it always had)."""
    if endpoint is None:
        return judge.key("judgment", template_hash, decoding, messages, attempt)
    return judge.key("judgment", template_hash, decoding, messages, attempt, {"endpoint": endpoint})
