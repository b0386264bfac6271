"""Type stub of the optional C accelerator `_token_codes.c` (see it for what it computes)."""

from collections.abc import Sequence

def token_strings(texts: Sequence[str], cjk_ranges: Sequence[tuple[int, int]]) -> list[str]: ...
