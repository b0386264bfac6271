"""Tokenizers of the ROUGE-L protocols, named as results record them.

- `cjk-char-v1` (`tokenize_cjk_char`, protocol `rolebench`): lowercased `[a-z0-9]+` runs (exactly
  `rouge_score`'s default tokenizer, no stemming) plus one token per CJK character (Han ideographs
  with their extensions and compatibility forms, kana, Hangul syllables); everything else
  (punctuation, spaces, other scripts) is dropped. On text without CJK characters its tokens are
  `rouge_score`'s, token for token; Chinese is never scored 0 and no segmentation dictionary moves
  a number.
- `rouge_score-default-nostem` (`tokenize_rouge_score`, OpenCompass's English): `rouge_score`'s
  default tokenizer, which deletes every CJK character.
- `rolellm-whitespace` / `rolellm-chars` (`rolellm_text`, protocol `rolellm`): pip `rouge` splits
  on spaces as written; Chinese is first turned into its non-space characters joined by spaces.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Tokenizer = Callable[[str], list[str]]

CJK_CHAR_TOKENIZER = "cjk-char-v1"
ROUGE_SCORE_TOKENIZER = "rouge_score-default-nostem"
ROLELLM_TOKENIZERS = {"en": "rolellm-whitespace", "zh": "rolellm-chars"}

_ALNUM_RE = re.compile(r"[a-z0-9]+")
_CJK_CHARS = (
    "\u3007"  # 〇 ideographic number zero
    "\u3041-\u3096\u309d-\u309f"  # hiragana
    "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"  # katakana (with the prolonged sound mark)
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK unified ideographs and extension A
    "\uac00-\ud7a3"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U000323af"  # extensions B-H and the compatibility supplement
)
_CJK_CHAR_RE = re.compile(f"[a-z0-9]+|[{_CJK_CHARS}]")
_ASCII_NON_ALNUM_TO_SPACE = {i: " " for i in range(128) if not chr(i).isalnum()}


def tokenize_rouge_score(text: str) -> list[str]:
    """`rouge_score`'s default tokenizer without stemming: lowercase, `[a-z0-9]+` runs (CJK is deleted)."""
    lowered = text.lower()
    if lowered.isascii():  # the same tokens, twice as fast
        return lowered.translate(_ASCII_NON_ALNUM_TO_SPACE).split()
    return _ALNUM_RE.findall(lowered)


def tokenize_cjk_char(text: str) -> list[str]:
    """Tokenizer `cjk-char-v1`: lowercased `[a-z0-9]+` runs plus one token per CJK character."""
    lowered = text.lower()
    if lowered.isascii():  # no CJK: the same tokens, twice as fast
        return lowered.translate(_ASCII_NON_ALNUM_TO_SPACE).split()
    return _CJK_CHAR_RE.findall(lowered)
