"""Sampling in a batch where every row draws with its own seed (`hf:`, `peft:`).

transformers draws a batch's tokens with one `torch.multinomial` on torch's global generator, so a
row's answer depends on the rows beside it and one seed serves the whole run. `RowSampler` is a logits
processor that makes each row's draw itself, with a `torch.Generator` of the row's seed: temperature,
then top-p (as transformers' own warpers apply them), a draw from the row's distribution, and scores
that leave only the drawn token, which `generate` run greedily then keeps. A row's answer so depends
on its own prompt and seed alone: the same in any batch, and the same when a run resumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class RowSampler:
    """The logits processor (see the module docstring); one per batch, `seeds` in the batch's row order."""

    def __init__(self, torch: Any, seeds: Sequence[int], temperature: float, top_p: float) -> None:
        if temperature <= 0:
            raise ValueError("RowSampler samples: temperature must be above 0 (0 is greedy)")
        self.torch, self.seeds, self.temperature, self.top_p = torch, list(seeds), temperature, top_p
        self.generators: list[Any] | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self.torch
        if self.generators is None:  # on the device of the scores, known at the first step
            self.generators = [torch.Generator(device=scores.device).manual_seed(s) for s in self.seeds]
        if len(self.generators) != scores.shape[0]:
            raise ValueError(f"{scores.shape[0]} rows of scores for {len(self.generators)} seeds")
        scores = scores.float() / self.temperature
        if self.top_p < 1.0:  # transformers' TopPLogitsWarper: drop the least likely tokens below 1 - top_p
            ordered, order = torch.sort(scores, descending=False)
            cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
            drop = cumulative <= (1 - self.top_p)
            drop[..., -1:] = False  # the most likely token always stays
            scores = scores.masked_fill(drop.scatter(1, order, drop), -float("inf"))
        probs = scores.softmax(dim=-1)
        drawn = torch.cat(
            [torch.multinomial(probs[row], 1, generator=g) for row, g in enumerate(self.generators)]
        )
        only = torch.full_like(scores, -float("inf"))
        return only.scatter_(1, drawn[:, None], 0.0)
