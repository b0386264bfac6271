"""Training prompts for a RoleBench reward: the chat messages `rolebench evaluate` sends, as a dataset.

`load_prompts` reads a split's rows through the data layer (`rolebench.data.samples`: the same
records, descriptions and checks as evaluation; `--limit`'s stratified, seeded sample), builds each
row's messages in `prompt_messages` as `rolebench evaluate`'s plan does (the elicitation method of
`rolebench.run.elicitation`; a few-shot method's demonstrations retrieved from the role's own
script by `rolebench.data.scripts`) and returns a `datasets.Dataset` with the columns TRL's trainers
and `rouge_l_reward` read: `prompt`, `references`, `language`, `role`, `id`.

The test part is the benchmark: a model trained on its prompts (or rewarded against its references)
has seen the answers, and its scores on that split mean nothing. It needs `allow_test=True`.
"""

from __future__ import annotations

import difflib
import numbers
import os
import warnings
from typing import TYPE_CHECKING, Any

from model_adapters.interface import Message
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import Sample, read_split
from rolebench.data.sampling import select
from rolebench.data.scripts import ScriptLibrary
from rolebench.data.splits import SPLITS, get_split
from rolebench.errors import ConfigError, ConfigTypeError, MissingDependency, kind_of
from rolebench.run.elicitation import Elicitation, sample_request
from rolebench.tasks.catalogue import catalogue, resolve

if TYPE_CHECKING:
    from datasets import Dataset

PARTS = ("train", "test")
TEST_LEAKS = (
    "training on the test part leaks the benchmark's answers into the model: its scores on that split "
    "then mean nothing"
)


# load_prompts' arguments: the types each accepts ("int": an integer, never a bool; None where optional).
ARGUMENT_TYPES: dict[str, tuple[Any, ...]] = {
    "split": (str,),
    "part": (str,),
    "data_dir": (str, os.PathLike, None),
    "limit": ("int", None),
    "elicitation": (str, None),
    "shots": ("int", None),
    "allow_test": (bool,),
    "seed": ("int",),
}


def _is(value: object, kind: Any) -> bool:
    if kind is None:
        return value is None
    if kind == "int":
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    return isinstance(value, kind)


def check_arguments(**given: object) -> None:
    """ConfigTypeError (a TypeError and a ValueError) naming the first argument of `load_prompts` whose
    type is wrong: a text where a number belongs (`shots="3"`), a list where a name does, a truthy text
    for `allow_test`."""
    for name, value in given.items():
        kinds = ARGUMENT_TYPES[name]
        if not any(_is(value, kind) for kind in kinds):
            wanted = " or ".join(
                "None" if k is None else "an integer" if k == "int" else f"a {getattr(k, '__name__', k)}"
                for k in kinds
            )
            raise ConfigTypeError(
                f"{name} is {kind_of(value)} ({value!r:.40}), not {wanted}",
                where=f"load_prompts({name}=...)",
            )


def prompt_messages(sample: Sample, elicitation: Elicitation, library: ScriptLibrary | None) -> list[Message]:
    """The chat messages `rolebench evaluate` sends for `sample` under `elicitation` (its one request builder,
    `rolebench.run.elicitation.sample_request`)."""
    return sample_request(sample, elicitation, library)[0].messages


def parse_elicitation(method: str, shots: int | None = None) -> Elicitation:
    """`rolebench evaluate --elicitation METHOD --shots N` for training prompts (one ConfigError line)."""
    try:
        return Elicitation.parse(method, shots)
    except ConfigError as error:
        raise ConfigError(
            error.what, where="load_prompts(elicitation=..., shots=...)", fix=error.fix
        ) from None


def check_part(part: str, allow_test: bool, stacklevel: int = 3) -> None:
    """ConfigError for an unknown part, or the test part without `allow_test`; a warning with it, shown at
    the caller `stacklevel` frames up (3: the caller of `check_part`'s caller)."""
    if part not in PARTS:
        close = difflib.get_close_matches(str(part), PARTS, n=1)
        raise ConfigError(
            f"unknown part {part!r}",
            where="load_prompts(part=...)",
            fix=(f"did you mean {close[0]!r}? " if close else "")
            + "use 'train' (or 'test' with allow_test=True)",
        )
    if part == "test" and not allow_test:
        raise ConfigError(
            f"{TEST_LEAKS}",
            where="load_prompts(part='test')",
            fix="use part='train', or pass allow_test=True",
        )
    if part == "test":
        warnings.warn(TEST_LEAKS, UserWarning, stacklevel=stacklevel)


def split_ids(name: str) -> list[str]:
    """The splits a name stands for: a split id (`zh_general`), or a task or group (`rolebench_zh`)."""
    if name in SPLITS:
        return [name]
    tasks, groups = catalogue()
    if name in tasks or name in groups:
        return list(dict.fromkeys(spec.split.id for spec in resolve([name])[0]))
    known = [*SPLITS, *sorted(tasks), *sorted(groups)]
    close = difflib.get_close_matches(str(name), known, n=1)
    raise ConfigError(
        f"unknown RoleBench split {name!r}",
        where="load_prompts(split=...)",
        fix=(f"did you mean {close[0]!r}? " if close else "")
        + "name a split ("
        + ", ".join(SPLITS)
        + ") or a task or group (`rolebench tasks`)",
    )


def load_prompts(
    split: str,
    part: str = "train",
    data_dir: str | None = None,
    limit: int | None = None,
    elicitation: str = "zero-shot",
    *,
    shots: int | None = None,
    allow_test: bool = False,
    seed: int = 0,
) -> Dataset:
    """A split's prompts with their references, as TRL's trainers and `rouge_l_reward` read them.

    Args:
        split: a split id (`zh_general`, `eng_instruct_specific`, ...; `rolebench data info` lists
            them), or a task or group name (`rolebench_zh`: both Chinese splits, one after the other).
        part: "train" (default) or "test" (needs `allow_test=True`: training on test leaks).
        data_dir: a RoleBench folder in the Hub layout; default $ROLEBENCH_DATA, else the Hub.
        limit: at most this many rows per split: `rolebench evaluate --limit`'s sample (stratified
            over roles, seeded by `seed`, stable as the limit grows), in dataset order.
        elicitation: how the role is elicited, as `rolebench evaluate --elicitation`: "zero-shot",
            "few-shot-prompt" or "few-shot-dialogue" (demonstrations retrieved per question from the
            role's own script, `profiles-*/profiles-*-{role}.jsonl`).
        shots: demonstrations per question for a few-shot method (`--shots`; default 3, 0: zero-shot).
        allow_test: allow `part="test"` (it warns: the model then has seen the benchmark's answers).
        seed: the seed of the `limit` sample (`rolebench evaluate --limit-seed`).

    Raises:
        ValueError: a bad value (an unknown split, part or method, the test part without
            `allow_test`, a limit under 1), as `rolebench.ConfigError`; a missing or malformed data
            file, as `rolebench.DataError`. An argument of the wrong type (`shots="3"`) is a
            `TypeError` as well (`rolebench.errors.ConfigTypeError`). Every message names the argument.

    Returns:
        A `datasets.Dataset` with `prompt` (chat messages, exactly as `rolebench evaluate` builds
        them), `references` (the row's reference answers), `language`, `role` and `id`.
    """
    check_arguments(
        split=split,
        part=part,
        data_dir=data_dir,
        limit=limit,
        elicitation=elicitation,
        shots=shots,
        allow_test=allow_test,
        seed=seed,
    )
    method = check_options(part, limit, elicitation, shots=shots, allow_test=allow_test)
    source = resolve_source(data_dir)
    columns: dict[str, list[Any]] = {"prompt": [], "references": [], "language": [], "role": [], "id": []}
    for split_def in map(get_split, split_ids(split)):
        rows = read_split(split_def, source, file=f"{part}.jsonl")
        samples = select(rows, None if limit is None else int(limit), "stratified", int(seed))
        library = ScriptLibrary(split_def, source) if method.few_shot else None
        add_rows(columns, samples, method, library)
    try:
        from datasets import Dataset
    except ImportError:
        raise MissingDependency("rolebench.rewards.load_prompts", "datasets", "data") from None
    return Dataset.from_dict(columns)


def check_options(
    part: str, limit: int | None, elicitation: str, *, shots: int | None, allow_test: bool
) -> Elicitation:
    """`load_prompts`' values checked in its order (shots, part, method, limit): its elicitation method."""
    if shots is not None and shots < 0:
        raise ConfigError(
            f"shots {shots} is not allowed", where="load_prompts(shots=...)", fix="use 0 or more"
        )
    check_part(part, allow_test, stacklevel=4)  # the warning points at load_prompts' caller
    method = parse_elicitation(elicitation, None if shots is None else int(shots))
    if limit is not None and limit < 1:
        raise ConfigError(
            f"limit {limit!r} is not allowed", where="load_prompts(limit=...)", fix="use 1 or more"
        )
    return method


def add_rows(
    columns: dict[str, list[Any]], samples: list[Sample], method: Elicitation, library: ScriptLibrary | None
) -> None:
    """One row per sample: its prompt as `rolebench evaluate` builds it, references, language, role, id."""
    for sample in samples:
        columns["prompt"].append(prompt_messages(sample, method, library))
        columns["references"].append(list(sample.references))
        columns["language"].append(sample.language)
        columns["role"].append(sample.role)
        columns["id"].append(sample.id)
