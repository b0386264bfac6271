"""RoCIT training examples: RoleGPT system prompt + question -> answer, loss on the answer tokens only.

Each row `{"role", "question", "generated": [...]}` of the configured train files gives one example
per target answer (all of `generated`, or the first): the messages are exactly the evaluation's
(`rolebench.prompt.role_messages`: the RoleGPT system instruction with the role's description, the
stripped question as the user turn), rendered with the base model's chat template (or the config's
`chat_template`; the system turn is merged into the user turn where the template refuses it). The
prompt tokens are labelled -100, so only the answer and the template's end-of-turn are learned.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from model_adapters import Message
from model_adapters.chat import merge_system
from rolebench.data.joins import as_references
from rolebench.data.resolve import resolve_source
from rolebench.errors import ConfigError, DataError
from rolebench.prompts.roleplay import role_messages
from rolebench.recipes.training.rocit.config import RocitConfig
from rolebench.storage.jsonl import read_jsonl

IGNORE_INDEX = -100


@dataclass(frozen=True)
class Example:
    input_ids: list[int]
    labels: list[int]


@dataclass
class DataReport:
    rows: int = 0
    examples: int = 0
    dropped_too_long: int = 0
    truncated: int = 0

    def line(self) -> str:
        return (
            f"{self.rows} rows -> {self.examples} examples ({self.truncated} answers truncated, "
            f"{self.dropped_too_long} dropped: prompt longer than max_length)"
        )


def training_conversations(config: RocitConfig) -> tuple[list[tuple[list[Message], str]], int]:
    """(messages, target answer) for every example, and the number of rows read."""
    source = resolve_source(config.data.data_dir)
    desc_path = source.path(config.data.profiles, purpose="role descriptions")
    descriptions = json.loads(desc_path.read_text(encoding="utf-8")) if desc_path else {}
    pairs: list[tuple[list[Message], str]] = []
    n_rows = 0
    for relpath in config.data.train_files:
        path = source.path(relpath, purpose="RoCIT training data")
        rows = list(read_jsonl(path)) if path else []
        if config.data.max_rows_per_file is not None and len(rows) > config.data.max_rows_per_file:
            rng = random.Random(f"{config.data.seed}/{relpath}")
            rows = [rows[i] for i in sorted(rng.sample(range(len(rows)), config.data.max_rows_per_file))]
        for number, row in enumerate(rows, 1):
            role, question = row.get("role"), row.get("question")
            if not isinstance(role, str) or not isinstance(question, str):
                raise DataError(
                    "a row needs string fields `role` and `question`", where=f"{relpath}:{number}"
                )
            if role not in descriptions:
                raise DataError(
                    f"no description for role {role!r}", where=f"{relpath} / {config.data.profiles}"
                )
            answers = as_references(row.get("generated"), f"{relpath}:{number}")
            if config.data.targets == "first":
                answers = answers[:1]
            messages = role_messages(role, descriptions[role], question, config.data.language)
            pairs += [(messages, answer.strip()) for answer in answers if answer.strip()]
        n_rows += len(rows)
    return pairs, n_rows


class ChatRenderer:
    """The base's chat template, with the system turn merged exactly when the `hf:` adapter merges it."""

    def __init__(self, tokenizer: Any) -> None:
        from model_adapters.chat import probe_system_role

        self.tokenizer = tokenizer
        self.system_role = probe_system_role(lambda m: self._apply(m, True))

    def _apply(self, messages: list[Message], add_generation_prompt: bool) -> str:
        return str(
            self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=add_generation_prompt
            )
        )

    def __call__(self, messages: list[Message], *, add_generation_prompt: bool) -> str:
        turns = merge_system(messages) if self.system_role == "merged" else messages
        return self._apply(turns, add_generation_prompt)


def encode(
    render: ChatRenderer, messages: list[Message], answer: str, max_length: int
) -> tuple[Example | None, bool]:
    """Token ids and labels of one example, and whether its answer was cut; None if the prompt is too long."""
    tokenizer = render.tokenizer
    prompt = render(messages, add_generation_prompt=True)
    full = render([*messages, {"role": "assistant", "content": answer}], add_generation_prompt=False)
    completion = full[len(prompt) :] if full.startswith(prompt) else answer + (tokenizer.eos_token or "")
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    room = max_length - len(prompt_ids)
    if room < 8:
        return None, False
    truncated = len(completion_ids) > room
    completion_ids = completion_ids[:room]
    return Example(prompt_ids + completion_ids, [IGNORE_INDEX] * len(prompt_ids) + completion_ids), truncated


def prepare_tokenizer(tokenizer: Any, config: RocitConfig) -> Any:
    """Give the tokenizer the config's chat template and a pad token when it lacks them."""
    if config.model.chat_template:
        tokenizer.chat_template = config.model.chat_template
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            f"{config.model.base} has no chat template",
            where="model.chat_template",
            fix="set model.chat_template in the config (see rolellama.yaml)",
        )
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def build_examples(config: RocitConfig, tokenizer: Any) -> tuple[list[Example], DataReport]:
    conversations, n_rows = training_conversations(config)
    report = DataReport(rows=n_rows)
    render = ChatRenderer(tokenizer)
    examples = []
    for messages, answer in conversations:
        example, truncated = encode(render, messages, answer, config.data.max_length)
        if example is None:
            report.dropped_too_long += 1
            continue
        report.truncated += truncated
        examples.append(example)
    report.examples = len(examples)
    if not examples:
        raise DataError(
            "no training example fits in max_length", where="data.max_length", fix="raise data.max_length"
        )
    return examples, report


def collate(batch: list[Example], pad_id: int) -> dict[str, Any]:
    """Right-padded tensors: input_ids, attention_mask, labels (padding labelled -100)."""
    import torch

    width = max(len(e.input_ids) for e in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, example in enumerate(batch):
        n = len(example.input_ids)
        ids[row, :n] = torch.tensor(example.input_ids)
        labels[row, :n] = torch.tensor(example.labels)
        mask[row, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}
