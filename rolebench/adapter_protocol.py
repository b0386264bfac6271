"""What a model object must give, checked before anything it gave is stored or recorded.

The adapter protocol (`model_adapters.ModelAdapter`): `generate(requests, config)` returns an iterator
of one `(request, Generation)` pair per request given, the Generation's text a str that is valid Unicode
(None, with an error, for a request that failed); `info()` (and an optional `identity()`) a table of
JSON values. A model that breaks it is a `ConfigTypeError` (a wrong type) or `ConfigError` naming what it
gave, so the Python API fails the Python way and the command line prints one line. A stored answer is
checked again when it is read back (`answer_problem`), so a store an older rolebench let a bad answer into
is never a dead end (`rolebench.cached_model` sets such a record aside).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from numbers import Real
from typing import Any

from model_adapters import Generation, Request, Usage
from rolebench.errors import ConfigError, ConfigTypeError, first_line, kind_of

PROTOCOL_FIX = (
    "a model's generate(requests, config) yields one (request, Generation) pair for each request it was "
    "given, the Generation's text a str (None, with an error, for a request that failed)"
)


def _bad_text(name: str, value: object) -> str | None:
    """What is wrong with an optional text field of an answer (None: nothing)."""
    if value is None:
        return None
    if not isinstance(value, str):
        return f"its {name} is {kind_of(value)}, not a str"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"its {name} is not valid Unicode (a lone surrogate at character {exc.start})"
    return None


def generation_problem(generation: object) -> str | None:
    """What is wrong with a `Generation` a model gave (None: a valid one, safe to store)."""
    if not isinstance(generation, Generation):
        return f"{kind_of(generation)} where a Generation belongs"
    for name in ("text", "error", "finish_reason"):
        problem = _bad_text(name, getattr(generation, name))
        if problem:
            return problem
    usage = generation.usage
    if not isinstance(usage, Usage) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0
        for n in (usage.prompt_tokens, usage.completion_tokens)
    ):
        return "its usage is not a Usage of two whole token counts"
    if not isinstance(generation.seconds, Real) or isinstance(generation.seconds, bool):
        return f"its seconds is {kind_of(generation.seconds)}, not a number"
    if not isinstance(generation.missing, bool):
        return f"its missing is {kind_of(generation.missing)}, not a bool"
    return None


def checked_answer(
    item: object, pending: dict[str, Request], where: str, *, owned: bool = False
) -> tuple[Request, Generation]:
    """One item a model's `generate` yielded, as `(request, generation)` once checked against the
    requests still `pending` (it is removed from them); a ConfigTypeError (a wrong type) or ConfigError
    (a request not asked, or asked once and answered twice; text that is not valid Unicode) naming it.
    `owned`: a backend of this package, whose text comes from elsewhere (a server may send a lone
    surrogate escaped in JSON): such an answer is a failed request (not stored, asked again), not an
    error that stops the run."""
    if not isinstance(item, tuple) or len(item) != 2:
        shape = f"a {len(item)}-tuple" if isinstance(item, tuple) else kind_of(item)
        raise ConfigTypeError(f"the model's generate() yielded {shape}", where=where, fix=PROTOCOL_FIX)
    request, generation = item
    if not isinstance(request, Request):
        raise ConfigTypeError(
            f"the model's generate() yielded {kind_of(request)} where the Request belongs",
            where=where,
            fix=PROTOCOL_FIX,
        )
    if pending.pop(request.id, None) is None:
        raise ConfigError(
            f"the model's generate() answered request {request.id[:16]} that it was not given, or twice",
            where=where,
            fix=PROTOCOL_FIX,
        )
    problem = generation_problem(generation)
    if problem is not None and owned and "Unicode" in problem:
        return request, Generation(text=None, error=f"the answer is not valid: {problem}")
    if problem is not None:
        error = ConfigTypeError if "Unicode" not in problem else ConfigError
        raise error(
            f"the model's answer to request {request.id[:16]} is not valid: {problem}",
            where=where,
            fix=PROTOCOL_FIX,
        )
    assert isinstance(generation, Generation)
    return request, generation


def checked_info(info: object, where: str, what: str = "info()") -> dict[str, Any]:
    """A model's `info()` (or `identity()`) as the JSON table it must be: text keys, JSON values, valid
    Unicode; a ConfigTypeError / ConfigError naming what is wrong."""
    fix = (
        f"a model's {what} returns a dict of JSON values with str keys, e.g. {{'name': ..., 'revision': ...}}"
    )
    if not isinstance(info, Mapping):
        raise ConfigTypeError(f"the model's {what} returned {kind_of(info)}", where=where, fix=fix)
    try:
        text = json.dumps(dict(info), ensure_ascii=False, allow_nan=False, sort_keys=True)
        text.encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        problem = "text that is not valid Unicode" if isinstance(exc, UnicodeError) else first_line(exc)
        raise ConfigTypeError(
            f"the model's {what} returned what cannot be recorded as JSON ({problem})", where=where, fix=fix
        ) from None
    result: dict[str, Any] = json.loads(text)
    return result


def answers_of(given: object, where: str) -> Iterator[object]:
    """What a model's `generate` returned, as the iterator the protocol says it is (a ConfigTypeError)."""
    if not isinstance(given, Iterable) or isinstance(given, str | bytes | Mapping):
        raise ConfigTypeError(
            f"the model's generate() returned {kind_of(given)}, not an iterator of answers",
            where=where,
            fix=PROTOCOL_FIX,
        )
    return iter(given)


def answer_problem(record: object) -> str | None:
    """What is wrong with a stored answer record (`answer_record`'s shape; None: it reads back)."""
    if not isinstance(record, dict):
        return f"it is {kind_of(record)}"
    for name in ("output", "error", "finish_reason"):
        problem = _bad_text(name, record.get(name))
        if problem:
            return problem
    usage, seconds = record.get("usage"), record.get("seconds")
    if usage is not None and not (
        isinstance(usage, dict)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in usage.values())
    ):
        return "its usage is not a table of token counts"
    if seconds is not None and (not isinstance(seconds, int | float) or isinstance(seconds, bool)):
        return f"its seconds is {kind_of(seconds)}, not a number"
    if not isinstance(record.get("failed", False), bool):
        return "its failed flag is not a bool"
    return None
