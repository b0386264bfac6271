"""RoleBench's ROUGE-L as a reward for reinforcement learning, in TRL's reward-function signature.

TRL's trainers (`GRPOTrainer`, `RLOOTrainer`, ...) call a reward function with keyword arguments:
`prompts`, `completions` (texts, or chat messages whose last assistant turn is the answer), and
every other column of the training dataset, one value per completion (`references`, `language`,
...), plus a few of their own (`completion_ids`, `trainer_state`, ...). It returns one float per
completion; None means "no reward for this item" (TRL leaves it out of the group's baseline).

`rouge_l_reward` scores each completion against its item's references with the `rolebench`
protocol: the best ROUGE-L F-measure over the references, the very numbers of
`rolebench.rouge_l(..., protocol="rolebench")`: it calls the same scorer (the protocol's
`score_batch`, which `rouge_l` wraps), one call per language in the batch. Not the paper's recall: recall
rewards length, and a policy optimised on it learns to ramble (SmolLM2-135M already buys an
above-RoleGPT SPE that way). `make_reward(protocol=...)` gives the same function under another
protocol, with a warning for recall.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rolebench.errors import ConfigError, DataError, kind_of
from rolebench.scoring.inputs import check_language
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL, get_protocol

RewardFunction = Callable[..., list[float | None]]
FIX_COMPLETION = "pass texts, or chat messages [{'role': 'assistant', 'content': TEXT}] as TRL does"


def _content_text(content: object, where: str) -> str:
    """A message's text: a string, or the text parts of a list of content parts (TRL's multimodal form)."""
    if isinstance(content, str):
        return content
    if content is None:  # an assistant turn with tool calls only
        return ""
    if isinstance(content, list) and all(isinstance(part, Mapping) for part in content):
        texts = [part.get("text") for part in content if part.get("type") == "text"]
        if all(isinstance(text, str) for text in texts):
            return "".join(texts)
        raise DataError(f"a text part of {where} holds no text", where="rouge_l_reward", fix=FIX_COMPLETION)
    raise DataError(
        f"the content of {where} is {kind_of(content)}", where="rouge_l_reward", fix=FIX_COMPLETION
    )


def completion_text(completion: object, index: int) -> str:
    """The answer of one completion: the text itself, or the content of its last assistant message."""
    if type(completion) is str:
        return completion
    if type(completion) is list and completion:  # TRL's form, first: one call per completion
        last = completion[-1]
        if type(last) is dict and last.get("role") == "assistant" and type(last.get("content")) is str:
            return str(last["content"])
    where = f"completions[{index}]"
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and all(isinstance(m, Mapping) for m in completion):
        for message in reversed(completion):
            if message.get("role") == "assistant":
                return _content_text(message.get("content"), where)
        raise DataError(f"{where} has no assistant message", where="rouge_l_reward", fix=FIX_COMPLETION)
    shape = "an empty list" if completion == [] else kind_of(completion)
    raise DataError(
        f"{where} is {shape}, not a text or chat messages", where="rouge_l_reward", fix=FIX_COMPLETION
    )


def item_references(value: object, index: int) -> list[str] | None:
    """An item's references as a list (one string counts as one reference), as given: the scorer sees
    what `rouge_l` would. None when it has none, or only blank ones."""
    if type(value) is list:  # the dataset's column, first (plain loops: one call per completion)
        for ref in value:
            if type(ref) is not str:
                break
        else:
            for ref in value:
                if ref and not ref.isspace():
                    return value
            return None
    if value is None:
        return None
    refs = [value] if isinstance(value, str) else value
    fix = "give each item a list of reference answers (rolebench.rewards.load_prompts does)"
    if not isinstance(refs, Sequence):
        raise DataError(
            f"references[{index}] is {kind_of(value)}, not a list of texts", where="rouge_l_reward", fix=fix
        )
    for position, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise DataError(
                f"references[{index}][{position}] is {kind_of(ref)}, not a text",
                where="rouge_l_reward",
                fix=fix,
            )
    return list(refs) if any(r and not r.isspace() for r in refs) else None


def item_languages(language: object, n: int) -> list[str]:
    """One language per item, from one language for the batch or a column of them."""
    if language is None:
        raise ConfigError(
            "rouge_l_reward needs each item's language",
            where="the training dataset has no `language` column",
            fix="add one ('en' or 'zh'; rolebench.rewards.load_prompts does) or pass language='en'",
        )
    languages = [language] * n if isinstance(language, str) else language
    if not isinstance(languages, Sequence) or len(languages) != n:
        raise ConfigError(
            f"`language` must be one language or one per completion ({n})",
            where="rouge_l_reward",
            fix="pass the dataset's `language` column as TRL does",
        )
    if isinstance(language, str):
        check_language(language, where="rouge_l_reward(language=...)")
    else:  # a column: each value checked (not through a set: a hostile value need not be hashable)
        for index, value in enumerate(languages):
            check_language(value, where=f"rouge_l_reward(language=...), item {index}")
    return list(languages)


def score_completions(
    completions: object, references: object, language: object, protocol: str
) -> list[float | None]:
    """ROUGE-L of each completion against its references under `protocol`; None for an item without any."""
    if references is None:
        raise ConfigError(
            "rouge_l_reward needs the reference answers",
            where="the training dataset has no `references` column",
            fix="build the dataset with rolebench.rewards.load_prompts, or add a `references` column",
        )
    if isinstance(completions, str) or not isinstance(completions, Sequence):
        raise DataError(
            f"completions is {kind_of(completions)}, not a list",
            where="rouge_l_reward",
            fix=FIX_COMPLETION,
        )
    if (
        isinstance(references, str)
        or not isinstance(references, Sequence)
        or len(references) != len(completions)
    ):
        raise ConfigError(
            f"{len(completions)} completions but references is not a list of {len(completions)}",
            where="rouge_l_reward",
            fix="pass one list of references per completion (TRL repeats the dataset column)",
        )
    texts = [completion_text(c, i) for i, c in enumerate(completions)]
    refs = [item_references(r, i) for i, r in enumerate(references)]
    languages = item_languages(language, len(texts))
    scorer = get_protocol(protocol)
    scorable = [r for r in refs if r is not None]
    if len(scorable) == len(refs) and len(set(languages)) == 1:  # the usual batch: one language
        return list(scorer.score_batch(texts, scorable, languages[0]))
    by_language: dict[str, list[int]] = {}
    for index, item_refs in enumerate(refs):
        if item_refs is not None:
            by_language.setdefault(languages[index], []).append(index)
    scores: list[float | None] = [None] * len(texts)
    for lang, indices in by_language.items():
        values = scorer.score_batch([texts[i] for i in indices], [refs[i] or [] for i in indices], lang)
        for index, value in zip(indices, values, strict=True):
            scores[index] = value
    return scores


def rouge_l_reward(
    prompts: object = None,
    completions: object = None,
    references: object = None,
    language: object = None,
    **kwargs: Any,
) -> list[float | None]:
    """The ROUGE-L F-measure (`rolebench` protocol) of each completion against its references, as a reward.

    Args:
        prompts: the batch's prompts (not used: the score depends on the answer and the references).
        completions: texts, or chat messages (the content of the last assistant message is scored).
        references: one list of reference answers per completion (a text counts as one reference;
            None or an empty list: no reward, None).
        language: "en" or "zh", one for the batch or one per completion.
        **kwargs: TRL's other arguments and dataset columns (ignored).

    Returns:
        One score in [0, 1] per completion (None for an item without references), equal to
        `rolebench.rouge_l(texts, references, language, protocol="rolebench")`.

    Raises:
        ValueError: a batch it cannot score (a missing column, lengths that differ, an unknown
            language, a completion or reference of the wrong shape), as `rolebench.ConfigError` /
            `DataError`, the message naming the argument and item (`completions[3]`); a language that
            is not a text is a `TypeError` as well.

    Example:
        >>> from trl import GRPOTrainer
        >>> from rolebench.rewards import load_prompts, rouge_l_reward
        >>> dataset = load_prompts("zh_general")
        >>> trainer = GRPOTrainer(model=..., reward_funcs=rouge_l_reward, train_dataset=dataset)
    """
    return score_completions(completions, references, language, F_MEASURE_PROTOCOL)


def make_reward(protocol: str = F_MEASURE_PROTOCOL) -> RewardFunction:
    """`rouge_l_reward` under another scoring protocol (`rolebench`, `rolellm`, `opencompass`).

    The function's name (`rouge_l_<protocol>`) is what TRL logs its reward under. `rolellm` (the
    paper's recall) warns: recall rewards length, so a policy trained on it learns to ramble.
    """
    scorer = get_protocol(protocol, where="make_reward(protocol=...)")  # with a suggestion when unknown
    if protocol == F_MEASURE_PROTOCOL:
        return rouge_l_reward
    if scorer.measure == "recall":
        warnings.warn(
            f"a {protocol!r} (recall) reward rewards long answers: a policy optimised on it learns to "
            f"ramble; use {F_MEASURE_PROTOCOL!r} (the F-measure) unless you are studying exactly that",
            UserWarning,
            stacklevel=2,
        )

    def reward(
        prompts: object = None,
        completions: object = None,
        references: object = None,
        language: object = None,
        **kwargs: Any,
    ) -> list[float | None]:
        return score_completions(completions, references, language, protocol)

    reward.__name__ = reward.__qualname__ = f"rouge_l_{protocol}"
    reward.__doc__ = f"`rouge_l_reward` under the {protocol!r} scoring protocol."
    return reward
