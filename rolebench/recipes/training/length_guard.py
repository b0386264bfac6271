"""The GRPO recipe's guard against length hacking: answers that grow past the `length-inflated` rule.

A policy optimised on ROUGE-L can learn to ramble: recall rewards it outright, and even the F-measure
can be gamed while the references are long. The guard wraps the reward function, so it sees every
completion the trainer scores: its length and its first reference's, in the protocol's own tokens
(`rolebench.scoring.answers.words`: words, or characters for Chinese), and whether it was cut at
`max_completion_length` (it ends without an end-of-sequence token: TRL's `clipped_ratio` rule). After
each optimizer step it applies `rolebench.scoring.flags.length_inflated` to the step's means, writes
one line to OUTPUT/train_log.jsonl and acts:

- the guard arms at the first step whose answers are within the rule (a starting model that already
  rambles is reported once: the F-measure reward pulls it shorter, and the guard watches from the
  moment it is within the rule);
- an armed guard that sees `patience` length-inflated steps in a row warns (`action: warn`) or stops
  training (`action: stop`, the default); `action: off` only logs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rolebench.errors import RoleBenchError
from rolebench.rewards.reward import RewardFunction, completion_text, item_languages, item_references
from rolebench.scoring.answers import words
from rolebench.scoring.flags import LENGTH_INFLATED, length_inflated


class LengthHacking(RoleBenchError):
    """The length guard stopped training: the policy's answers grew past the length-inflated rule."""


@dataclass(frozen=True)
class StepLengths:
    """One optimizer step's completions: means in protocol tokens, share cut, mean reward."""

    step: int
    completions: int
    reward_mean: float | None
    answer_words_mean: float | None
    reference_words_mean: float | None
    cut_share: float | None

    @property
    def ratio(self) -> float | None:
        if self.answer_words_mean is None or not self.reference_words_mean:
            return None
        return self.answer_words_mean / self.reference_words_mean

    @property
    def inflated(self) -> bool:
        return length_inflated(self.answer_words_mean, self.reference_words_mean, self.cut_share)

    def describe(self) -> str:
        ratio = f"{self.ratio:.2f}x" if self.ratio is not None else "-"
        cut = f"{self.cut_share:.0%}" if self.cut_share is not None else "-"
        return (
            f"step {self.step}: answers {self.answer_words_mean or 0:.1f} words/chars against the "
            f"references' {self.reference_words_mean or 0:.1f} ({ratio}), {cut} cut at max_completion_length"
        )


def _mean(total: float, count: float) -> float | None:
    return total / count if count else None


def _all_reduce(values: list[float]) -> list[float]:
    """Sums over the processes of `accelerate launch` (so every process decides alike); as is alone."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return values
    from accelerate import PartialState

    tensor = torch.tensor(values, dtype=torch.float64, device=PartialState().device)
    dist.all_reduce(tensor)
    return [float(v) for v in tensor.tolist()]


class LengthGuard:
    """A reward function (the wrapped one's scores, unchanged) that also measures the completions;
    `end_step` judges them once per optimizer step (see the module docstring)."""

    def __init__(
        self,
        reward: RewardFunction,
        *,
        action: str = "stop",
        patience: int = 2,
        log_path: Path | None = None,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        self.reward, self.action, self.patience, self.log_path = reward, action, patience, log_path
        self.__name__ = getattr(reward, "__name__", "reward")  # TRL logs the reward under this name
        self.echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
        # end-of-sequence and pad ids: a completion that ends with another token was cut
        self.stop_ids: Collection[int] = ()
        self.steps: list[StepLengths] = []
        self.armed, self.run, self.warned_start = False, 0, False
        self.stopped: str | None = None  # why training was stopped
        self._sums = [0.0] * 8

    def __call__(self, **kwargs: Any) -> list[float | None]:
        scores = self.reward(**kwargs)
        completions, references = kwargs.get("completions") or [], kwargs.get("references") or []
        texts = [completion_text(c, i) for i, c in enumerate(completions)]
        languages = item_languages(kwargs.get("language"), len(texts))
        answers = [float(words(text, lang)) for text, lang in zip(texts, languages, strict=True)]
        refs = [item_references(r, i) for i, r in enumerate(references)]
        ref_words = [float(words(r[0], lang)) for r, lang in zip(refs, languages, strict=True) if r]
        ids = kwargs.get("completion_ids") or []
        cut = [bool(seq) and seq[-1] not in self.stop_ids for seq in ids]
        rewarded = [s for s in scores if s is not None]
        batch = [sum(answers), len(answers), sum(ref_words), len(ref_words), sum(cut), len(cut)]
        batch += [sum(rewarded), len(rewarded)]
        self._sums = [a + b for a, b in zip(self._sums, batch, strict=True)]
        log_metric = kwargs.get("log_metric")
        if callable(log_metric) and answers:
            log_metric("length/answer_words_mean", sum(answers) / len(answers))
            if ref_words:
                log_metric("length/reference_words_mean", sum(ref_words) / len(ref_words))
        return scores

    def _collect(self, step: int) -> StepLengths | None:
        sums, self._sums = _all_reduce(self._sums), [0.0] * 8
        if not sums[1]:
            return None  # no new completions this step (TRL reuses a generation over several steps)
        answer, n_answer, ref, n_ref, cut, n_cut, reward, n_reward = sums
        return StepLengths(
            step,
            int(n_answer),
            _mean(reward, n_reward),
            _mean(answer, n_answer),
            _mean(ref, n_ref),
            _mean(cut, n_cut),
        )

    def _verdict(self, lengths: StepLengths) -> str:
        if self.action == "off":
            return "off"
        if not lengths.inflated:
            self.armed, self.run = True, 0
            return "ok"
        if not self.armed:
            if not self.warned_start:
                self.warned_start = True
                self.echo(
                    f"length guard: the starting model's answers are already {LENGTH_INFLATED} "
                    f"({lengths.describe()}); the guard arms once they are within the rule"
                )
            return "start-inflated"
        self.run += 1
        if self.run < self.patience:
            return "inflated"
        return "stop" if self.action == "stop" else "warn"

    def end_step(self, step: int, is_main: bool = True) -> bool:
        """Judge the completions scored since the last step; True when training must stop."""
        lengths = self._collect(step)
        if lengths is None:
            return False
        self.steps.append(lengths)
        verdict = self._verdict(lengths)
        if is_main and self.log_path is not None:
            line = {**asdict(lengths), "length_ratio": lengths.ratio, "length_inflated": lengths.inflated}
            with open(self.log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({**line, "guard": verdict}) + "\n")
        if verdict in ("warn", "stop") and self.run == self.patience:
            what = (
                f"answers grew past the {LENGTH_INFLATED} rule for {self.run} steps in a row "
                f"({lengths.describe()}): the policy is learning to ramble"
            )
            if verdict == "stop":
                self.stopped = what
            if is_main:
                self.echo(f"length guard: {what}" + ("; stopping" if verdict == "stop" else ""))
        return verdict == "stop"

    def callback(self) -> Any:
        """A `transformers.TrainerCallback` that runs `end_step` after every optimizer step."""
        from transformers import TrainerCallback

        guard = self

        class _LengthGuardCallback(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
                if guard.end_step(state.global_step, state.is_world_process_zero):
                    control.should_training_stop = True
                return control

        return _LengthGuardCallback()
