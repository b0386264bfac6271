"""Training reference models on RoleBench and evaluating them right after: `rocit` (supervised, LoRA) and
`grpo` (reinforcement learning, TRL), each its own package, over what both use: `config` (YAML configs
checked before any model loads, the sections they share, the shipped `configs/`), `trained` (the
training libraries, the base, the saved adapter and its training log, `evaluate` after training) and
`length_guard` (a reward wrapper that stops a policy growing its answers to game ROUGE-L)."""
