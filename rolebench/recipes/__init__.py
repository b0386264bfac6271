"""Recipes that regenerate RoleBench data and train the paper's reference models (and beyond it), in two
independent packages (docs/RECIPES.md):

- `data`: generating the data with any model the harness loads (`describe`: a role's description and
  catchphrases; `context_instruct`: role-specific questions and answers; `rolegpt`: answers to general
  instructions in role; `splits`: the train/test splits), every call through one cached generator
  (`data.generation`), so each stage is concurrent, cached and resumable.
- `training`: training on it and evaluating the result right after, one package per recipe (`rocit`:
  role-conditioned instruction tuning, the paper's RoleLLaMA / RoleGLM; `grpo`: RL with RoleBench's
  ROUGE-L F as the reward) over what they share (`config`, `trained`, `length_guard`, shipped `configs/`).
"""
