"""Tokenizers of the ROUGE-L protocols, named as results record them.

- `cjk-char-v1` (`tokenize_cjk_char`, protocol `rolebench`): lowercased `[a-z0-9]+` runs (exactly
  `rouge_score`'s default tokenizer, no stemming) plus one token per CJK character (Han ideographs
  with their extensions and compatibility forms, kana, Hangul syllables); everything else
  (punctuation, spaces, other scripts) is dropped. On text without CJK characters its tokens are
  `rouge_score`'s, token for token; Chinese is never scored 0 and no segmentation dictionary moves
  a number. `tokenize_cjk_char` is its one definition; `cjk_char_keys` computes the same tokens for
  many texts at once as numpy keys, without a Python object per token (the fast `rolebench`
  scorer's input; `tests/test_scoring.py` checks the two agree token for token).
- `rouge_score-default-nostem` (`tokenize_rouge_score`, OpenCompass's English): `rouge_score`'s
  default tokenizer, which deletes every CJK character.
- `rolellm-whitespace` / `rolellm-chars` (`rolellm_text`, protocol `rolellm`): pip `rouge` splits
  on spaces as written; Chinese is first turned into its non-space characters joined by spaces.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Tokenizer = Callable[[str], list[str]]
IntArray = npt.NDArray[np.intp]
KeyArray = npt.NDArray[np.uint64]

CJK_CHAR_TOKENIZER = "cjk-char-v1"
ROUGE_SCORE_TOKENIZER = "rouge_score-default-nostem"
ROLELLM_TOKENIZERS = {"en": "rolellm-whitespace", "zh": "rolellm-chars"}

CJK_RANGES: tuple[tuple[int, int], ...] = (  # the CJK characters of cjk-char-v1, one token each
    (0x3007, 0x3007),  # 〇 ideographic number zero
    (0x3041, 0x3096),  # hiragana
    (0x309D, 0x309F),
    (0x30A1, 0x30FA),  # katakana (with the prolonged sound mark)
    (0x30FC, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x323AF),  # extensions B-H and the compatibility supplement
)
_CJK_CHARS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
_ALNUM_RE = re.compile(r"[a-z0-9]+")
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


# ---- cjk-char-v1 for many texts at once, as keys ---------------------------------------------

# Texts that need their lowercased code points: CJK characters, and the only two characters outside
# A-Z whose lowercase holds a token character (U+0130 -> "i" + U+0307: a token "i" then a break;
# U+212A KELVIN SIGN -> "k"). Any other text tokenizes on its UTF-8 bytes (test: all code points).
_CODE_POINT_RE = re.compile(f"[{_CJK_CHARS}\u0130\u212a]")
# UTF-8 byte -> token byte: ASCII letters (lowercased) and digits; 0 (a separator) for every other
# byte, among them every byte of a multi-byte character (all >= 0x80).
_TOKEN_BYTES = bytes(b | 0x20 if chr(b).isupper() else b if chr(b).isalnum() else 0 for b in range(128))
_TOKEN_BYTES += bytes(128)
_LOW_BYTES = np.array([(1 << 8 * k) - 1 for k in range(9)], dtype=np.uint64)  # masks of the low k bytes
LONG_TOKEN = np.uint64(0xFFFF_FFFF_FFFF_FFFF)  # k2 of a token over 16 characters (k1: index in `long`)
CJK_TOKEN = np.uint64(0xFFFF_FFFF_FFFF_FFFE)  # k2 of a CJK character (k1: its code point)


@dataclass
class TokenKeys:
    """cjk-char-v1 tokens of many texts: token t is the exact key (k1[t], k2[t]); text i's tokens are
    first[i]:last[i]. Up to 16 letters/digits: its bytes, little-endian, k1 the first 8 and k2 the next
    8, zero-padded (token bytes are never 0, and k2 <= 0x7A7A...7A, so the three kinds never meet);
    a longer token: (its index in `long`, LONG_TOKEN); a CJK character: (its code point, CJK_TOKEN)."""

    k1: KeyArray
    k2: KeyArray
    first: IntArray
    last: IntArray
    long: dict[bytes, int]

    def tokens(self, i: int) -> list[str]:
        """Text i's tokens as strings (`tokenize_cjk_char(texts[i])`): for tests and debugging."""
        longs = {index: token.decode("ascii") for token, index in self.long.items()}
        out = []
        span = slice(self.first[i], self.last[i])
        for a, b in zip(self.k1[span], self.k2[span], strict=True):
            if b == CJK_TOKEN:
                out.append(chr(int(a)))
            elif b == LONG_TOKEN:
                out.append(longs[int(a)])
            else:
                out.append(
                    (int(a).to_bytes(8, "little") + int(b).to_bytes(8, "little")).rstrip(b"\0").decode()
                )
        return out


def _run_keys(
    buf: bytes, starts: IntArray, ends: IntArray, long: dict[bytes, int]
) -> tuple[KeyArray, KeyArray]:
    """Keys of the runs buf[starts[i]:ends[i]] (buf: token bytes, 0 elsewhere, then 16 zero bytes)."""
    words = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))  # words[i]: buf[i:i + 8]
    lengths = ends - starts
    k1 = words[starts] & _LOW_BYTES[np.minimum(lengths, 8)]
    k2 = np.zeros(len(starts), dtype=np.uint64)
    over = np.flatnonzero(lengths > 8)
    k2[over] = words[starts[over] + 8] & _LOW_BYTES[np.minimum(lengths[over] - 8, 8)]
    for i in np.flatnonzero(lengths > 16).tolist():
        k1[i] = long.setdefault(buf[starts[i] : ends[i]], len(long))
        k2[i] = LONG_TOKEN
    return k1, k2


def _counts(starts: IntArray, sizes: list[int]) -> IntArray:
    """Tokens per text, given the tokens' start offsets and the texts' lengths (+1 separator each)."""
    size = np.fromiter(sizes, dtype=np.intp, count=len(sizes)) + 1
    first = np.searchsorted(starts, np.cumsum(size) - size)
    return np.diff(first, append=len(starts))


def _byte_tokens(texts: list[str], long: dict[bytes, int]) -> tuple[KeyArray, KeyArray, IntArray]:
    """Keys and per-text counts of texts without a `_CODE_POINT_RE` character: the runs of ASCII
    letters/digits of their UTF-8 bytes (lone surrogates pass as 3 bytes >= 0x80)."""
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    buf = b"\0".join(encoded).translate(_TOKEN_BYTES) + bytes(16)
    is_token = np.frombuffer(buf, dtype=np.uint8).astype(bool)
    # alternately a start and an end (np.diff of booleans is `!=`, a boolean array: flatnonzero reads
    # it ten times faster than the int8 difference)
    edges = np.flatnonzero(np.diff(is_token, prepend=False))
    starts, ends = edges[0::2], edges[1::2]
    k1, k2 = _run_keys(buf, starts, ends, long)
    return k1, k2, _counts(starts, list(map(len, encoded)))


def _code_point_tokens(texts: list[str], long: dict[bytes, int]) -> tuple[KeyArray, KeyArray, IntArray]:
    """Keys and per-text counts of any texts, from their lowercased code points: letter/digit runs as
    in `_byte_tokens` (ASCII only: the code points are cut to a byte after the test), CJK characters."""
    lowered = [t.lower() for t in texts]
    cps = np.frombuffer("\0".join(lowered).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    is_alnum = ((cps - np.uint32(0x61)) < 26) | ((cps - np.uint32(0x30)) < 10)
    is_cjk = np.zeros(len(cps), dtype=bool)
    for lo, hi in CJK_RANGES:
        is_cjk |= (cps - np.uint32(lo)) <= hi - lo
    buf = np.where(is_alnum, cps, 0).astype(np.uint8).tobytes() + bytes(16)
    edges = np.flatnonzero(np.diff(is_alnum, prepend=False, append=False))
    run_k1, run_k2 = _run_keys(buf, edges[0::2], edges[1::2], long)
    cjk_at = np.flatnonzero(is_cjk)
    starts = np.concatenate((edges[0::2], cjk_at))
    order = np.argsort(starts, kind="stable")  # back to text order
    k1 = np.concatenate((run_k1, cps[cjk_at].astype(np.uint64)))[order]
    k2 = np.concatenate((run_k2, np.full(len(cjk_at), CJK_TOKEN, dtype=np.uint64)))[order]
    return k1, k2, _counts(starts[order], list(map(len, lowered)))


def cjk_char_keys(texts: Sequence[str]) -> TokenKeys:
    """`tokenize_cjk_char` of every text, as exact keys (see `TokenKeys`), in a few numpy passes.

    Texts without CJK characters, U+0130 or U+212A (nearly all English) are tokenized on their UTF-8
    bytes, mapped by `bytes.translate` to their lowercase ASCII letters/digits and 0 elsewhere;
    token boundaries are the edges of the non-zero runs. The others go through their lowercased
    code points (UTF-32): letter/digit runs the same way, and each CJK character its own token.
    """
    long: dict[bytes, int] = {}
    slow = [i for i, t in enumerate(texts) if not t.isascii() and _CODE_POINT_RE.search(t)]
    if not slow:  # the common case: one group, already in text order
        k1, k2, counts = _byte_tokens(list(texts), long)
        last = np.cumsum(counts)
        return TokenKeys(k1, k2, last - counts, last, long)
    is_slow = np.zeros(len(texts), dtype=bool)
    is_slow[slow] = True
    parts = []
    counts = np.zeros(len(texts), dtype=np.intp)
    for at, tokenize in ((np.flatnonzero(~is_slow), _byte_tokens), (np.asarray(slow), _code_point_tokens)):
        if len(at):
            k1, k2, counts[at] = tokenize([texts[i] for i in at.tolist()], long)
            parts.append((k1, k2, at))
    order = np.concatenate([at for _, _, at in parts])  # tokens are stored group by group
    last = np.empty(len(texts), dtype=np.intp)
    last[order] = np.cumsum(counts[order])
    k1 = np.concatenate([p[0] for p in parts])
    k2 = np.concatenate([p[1] for p in parts])
    return TokenKeys(k1, k2, last - counts, last, long)
