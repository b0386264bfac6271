"""The one rule of what makes two runs the same run: how each setting of
`rolebench.run.definition.RunDefinition` is compared (a test holds the two to the same names)."""

from __future__ import annotations

# The one rule of what makes two runs the same run: how each setting of `RunDefinition` is compared.
# `BY_VALUE` settings must be equal (the guard names them, `RunDefinition.settings`); the others are
# compared through what they resolve to. A folder's guard (`rolebench.evaluation.guard`) compares the model
# by its identity, the data by its resolved location and files, each task's length cap, and lets `--limit`
# grow; a sweep's "already done" (`RunDefinition.identity`) takes those by value too, and the model's
# identity and the tasks' facts beside them; a generation key (`rolebench.evaluation.generate`) holds the
# model's identity and, of the rest, what changes an answer: the decoding (`decoding`, with a task's cap;
# under sampling each item's own seed too) and a few-shot elicitation (`elicitation_method`), beside the
# request itself.
BY_VALUE = "by value"
MODEL = "by the model's identity (spec, output-changing options, the execution's base URL)"
DATA = "by the resolved data: its location and the sha256 of every file read"
TASKS = "by the resolved tasks: each one's version, file digest and length cap"
OPPONENT = "by the opponent's identity (spec, output-changing options, the execution's opponent base URL)"
LIMIT = "the same --limit (a folder's run may grow it when every task is evaluated again)"
SAME_RUN: dict[str, str] = {
    "model": MODEL,
    "tasks": TASKS,
    "model_args": MODEL,
    "data_dir": DATA,
    "revision": DATA,
    "limit": LIMIT,
    "limit_mode": BY_VALUE,
    "limit_seed": BY_VALUE,
    "protocol": BY_VALUE,
    "elicitation": BY_VALUE,
    "shots": BY_VALUE,
    "max_new_tokens": TASKS,
    "temperature": BY_VALUE,
    "top_p": BY_VALUE,
    "repetition_penalty": BY_VALUE,
    "seed": BY_VALUE,
    "bootstrap": BY_VALUE,
    "include_path": TASKS,
    "opponent": BY_VALUE,
    "opponent_args": OPPONENT,
    "turns": BY_VALUE,
}
RESOLVED_ONLY = (
    "model_args",
    "tasks",
    "include_path",
    "opponent_args",
)  # no meaning by value: only what they resolve to
# the settings a stored answer depends on (with the model's identity): the generation key's run-level part,
# as `decoding` (the seed under sampling only) and `elicitation_method` (`Elicitation.key`) give it
CHANGES_ANSWERS = (
    "elicitation",
    "shots",
    "max_new_tokens",
    "temperature",
    "top_p",
    "repetition_penalty",
    "seed",
)
