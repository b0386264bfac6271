"""RoCIT, role-conditioned instruction tuning (the paper's RoleLLaMA / RoleGLM): `config` (the YAML
config), `data` (train rows as prompt + answer examples, the prompt masked), `train` (the resumable LoRA
loop under accelerate), `recipe` (end to end: load, train, save, evaluate)."""
