"""RoleBench as a reward for reinforcement learning (TRL's GRPO and the like).

- `rouge_l_reward`: TRL's reward-function signature; the ROUGE-L F-measure (`rolebench` protocol) of
  each completion against its references, equal to `rolebench.rouge_l(..., protocol="rolebench")`.
- `make_reward(protocol=...)`: the same under another protocol.
- `load_prompts(split, part="train", ...)`: a `datasets.Dataset` of the prompts `rolebench evaluate`
  sends, with their references, language, role and id.

`rolebench recipe grpo` trains with them (`rolebench/recipes/training/grpo/`).
"""

from __future__ import annotations

from rolebench.rewards.prompts import load_prompts
from rolebench.rewards.reward import make_reward, rouge_l_reward

__all__ = ["load_prompts", "make_reward", "rouge_l_reward"]
