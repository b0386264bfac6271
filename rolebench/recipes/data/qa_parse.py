"""Parsing Context-Instruct generations: `Question N: ... Factualness: High|Low, because ... Response: ...`.

Generators wrap the format in Markdown (`**Question 1:**`, `### Question 1`), use full-width
colons, Chinese labels (问题 / 事实性 / 回答) or "Confidence" for "Factualness"; all are accepted.
An item without a question, a factualness value or a response is dropped, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DECOR = r"[\s*#>_\-]*"
_QUESTION = re.compile(
    rf"^{_DECOR}(?:Question|Q|问题)\s*(\d+)\s*\**\s*[:：.、)）]\s*\**", re.IGNORECASE | re.MULTILINE
)
_FACT = re.compile(
    r"\**\s*(?:Factualness|Factuality|Confidence|事实性|真实性|置信度)\s*\**\s*[:：]\s*\**\s*(High|Low|高|低)\**",
    re.IGNORECASE,
)
_RESPONSE = re.compile(
    r"^" + _DECOR + r"(?:Response|Answer|回答|回复|答案)\s*\**\s*[:：]\s*\**", re.IGNORECASE | re.MULTILINE
)
_REASON_LEAD = re.compile(r"^[\s,，.。:：;；*]*(?:because|as|since|因为|由于)?[\s,，:：]*", re.IGNORECASE)


@dataclass(frozen=True)
class QAItem:
    """One generated question with its factualness label ("high" / "low"), the reason and the response."""

    number: int
    question: str
    factualness: str
    reason: str
    response: str

    @property
    def is_high(self) -> bool:
        return self.factualness == "high"


def _clean(text: str, *, keep_lines: bool = False) -> str:
    text = re.sub(r"\s*\n\s*", "\n" if keep_lines else " ", text.strip())
    return text.strip(" *\"“”'`").strip()


def _factualness(value: str) -> str:
    return "high" if value.lower() in ("high", "高") else "low"


def parse_block(number: int, block: str) -> QAItem | None:
    """One `Question N` block (the text after its label), or None when a part is missing."""
    fact = _FACT.search(block)
    response = _RESPONSE.search(block)
    if fact is None or response is None or response.start() < fact.start():
        return None
    question = _clean(block[: fact.start()])
    answer = _clean(
        re.split(r"\n\s*(?:-{3,}|\*{3,}|_{3,})\s*(?:\n|$)", block[response.end() :])[0], keep_lines=True
    )
    reason = _clean(_REASON_LEAD.sub("", block[fact.end() : response.start()], count=1))
    if not question or not answer:
        return None
    return QAItem(number, question, _factualness(fact.group(1)), reason, answer)


def parse_items(text: str) -> list[QAItem]:
    """Every well-formed item of a generation, in order."""
    starts = list(_QUESTION.finditer(text))
    items = []
    for here, following in zip(starts, [*starts[1:], None], strict=True):
        end = following.start() if following is not None else len(text)
        item = parse_block(int(here.group(1)), text[here.end() : end])
        if item is not None:
            items.append(item)
    return items
