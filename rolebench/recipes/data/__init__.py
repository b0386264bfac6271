"""Generating RoleBench data (the paper's role profile construction, Context-Instruct and RoleGPT) and
splitting it into the benchmark's train/test splits: `describe`, `context_instruct`, `rolegpt`, `splits`,
with what they share: `generation` (the cached generator every call goes through), `qa_parse` (reading
the generators' question/answer items) and `dialogues` (profile and script text as prompt material)."""
