"""Recipes that regenerate RoleBench data and train the paper's reference models.

- `context_instruct`: role-specific questions, factualness labels and answers from a profile or script.
- `rolegpt`: answers to general instructions in role (RoleGPT prompt + few-shot dialogue engineering).
- `describe`: a new role's description and catchphrases, as a `desc.json` entry.
- `splits`: instruction-generalization and role-generalization train/test splits.
- `rocit`: role-conditioned instruction tuning (LoRA) and the evaluation of the trained adapter.

Every generator call goes through a model adapter (`model_adapters.load_model`) and a
`RecordStore`, so each stage is concurrent, cached and resumable. See docs/RECIPES.md.
"""
