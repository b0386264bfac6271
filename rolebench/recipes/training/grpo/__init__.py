"""GRPO with RoleBench's ROUGE-L F-measure as the reward (TRL's GRPOTrainer): `config` (the YAML config),
`settings` (its `grpo` section: TRL's settings, their types and ranges), `inputs` (the start model, the
prompts, whether checkpoints may be resumed), `recipe` (end to end: train, guard, save, evaluate before
and after)."""
