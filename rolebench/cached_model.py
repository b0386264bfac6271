"""A model behind a record store: identified by one rule, loaded only when something is missing, and
the one cached generation loop.

Used by every stage that asks a model for text (evaluate's generations, the judge's verdicts, the
recipes' calls). The identity is `model_adapters.model_identity` (spec, output-changing options, local
weights' and tokenizer files' fingerprint, an API model's server; never transport settings), so the three
stores agree on what "the same model" means. A store key is that identity plus the caller's parts
(decoding settings, messages, ...). The adapter's `info()` is remembered in the store, so a fully cached
run loads no model.

`CachedModel.complete` is the loop every stage uses: look the keys up, generate what is missing (one
request per distinct key), store each answer the moment it arrives (a failed request is never stored,
so the next run asks again), show progress, and stop after a run of failures (the model or server is
down; everything so far is kept).

Every answer is checked before it is stored (`checked_answer`: one `(request, Generation)` pair per
request asked, its text a str that is valid Unicode, or None): a model that breaks the adapter protocol
is a `ConfigTypeError` / `ConfigError` naming what it gave, and nothing it gave wrongly is stored. A
stored answer that does not read back as one (e.g. written by an older rolebench) is named on stderr,
set aside in the store, and asked again, so a store never makes a run folder unusable.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from tqdm.auto import tqdm

from model_adapters import (
    Generation,
    GenerationConfig,
    ModelAdapter,
    ModelSpec,
    Request,
    Usage,
    load_model,
    model_identity,
    request_meta_keys,
)
from rolebench.errors import ConfigError, ConfigTypeError, ModelError, RoleBenchError, first_line, kind_of
from rolebench.storage.records import RecordStore, content_key

NOTHING_RETURNED = "the backend returned nothing for this request"


def answer_record(generation: Generation) -> dict[str, Any]:
    """How an answer is stored (and handed back): text, error, time, tokens, why it stopped."""
    return {
        "output": generation.text,
        "error": generation.error,
        "seconds": generation.seconds,
        "usage": vars(generation.usage),
        "finish_reason": generation.finish_reason,
        "failed": generation.failed,
    }


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


def _answers(given: object, where: str) -> Iterator[object]:
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


@dataclass
class Completed:
    """What one `CachedModel.complete` call gave: a record per key, and what it cost."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # stored, or new (failed: not stored)
    fresh: set[str] = field(default_factory=set)  # the keys generated by this call
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def cached(self) -> int:
        return len(self.records) - len(self.fresh)


_INFO = "model-info"


def stored_info(store: RecordStore, identity: Mapping[str, Any]) -> dict[str, Any] | None:
    """The info a model of this identity gave when it was last loaded with this store (None: never)."""
    return store.get(content_key(_INFO, dict(identity)))


class CachedModel:
    """`spec` + `options` (validated at once) with a store; `adapter()` loads the model on first call.

    A model already in memory (`given`) is an adapter with the identity its caller computed (e.g. a
    fingerprint of its weights); it is never loaded, and never closed here (its caller owns it)."""

    def __init__(
        self,
        spec: str | ModelSpec,
        options: Mapping[str, Any],
        store: RecordStore,
        identity: Mapping[str, Any] | None = None,
    ) -> None:
        """`identity`: the caller's own (e.g. the judge's, whose endpoint its keys hold apart); by
        default `model_identity(spec, options)`, which also checks the options."""
        self.spec: str | ModelSpec = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
        self.options = dict(options)
        checked = model_identity(self.spec, self.options)
        self.identity = dict(identity) if identity is not None else checked
        self.meta_keys = request_meta_keys(self.spec)
        self.store = store
        self._adapter: ModelAdapter | None = None
        self._owned = True
        self._info_key = content_key(_INFO, self.identity)

    @classmethod
    def given(cls, adapter: ModelAdapter, identity: Mapping[str, Any], store: RecordStore) -> CachedModel:
        """A model in memory (see the class docstring); its `request_meta_keys`, if any, enter its keys."""
        model = cls.__new__(cls)
        model.spec, model.options, model.identity = adapter.spec, {}, dict(identity)
        model.meta_keys = tuple(getattr(adapter, "request_meta_keys", ()))
        model.store, model._adapter, model._owned = store, adapter, False
        model._info_key = content_key(_INFO, model.identity)
        return model

    @classmethod
    def stored(cls, spec: str, identity: Mapping[str, Any], store: RecordStore) -> CachedModel:
        """A model known only by its identity, to read what the store holds of it (it cannot be loaded
        when `spec` names no backend, e.g. a model that was given in memory)."""
        model = cls.__new__(cls)
        model.spec, model.options, model.identity = spec, {}, dict(identity)
        try:
            model.meta_keys = request_meta_keys(spec)
        except RoleBenchError:
            model.meta_keys = ()
        model.store, model._adapter, model._owned = store, None, True
        model._info_key = content_key(_INFO, model.identity)
        return model

    @property
    def loaded(self) -> bool:
        """Whether the model was loaded in this process (False when every answer came from the store)."""
        return self._adapter is not None

    def key(self, *parts: Any) -> str:
        """The store key of one record of this model: its identity plus the caller's `parts`."""
        return content_key(self.identity, *parts)

    def adapter(self) -> ModelAdapter:
        if self._adapter is None:
            self._adapter = load_model(self.spec, **self.options)
            self.store.put(self._info_key, checked_info(self._adapter.info(), str(self.spec)))
        return self._adapter

    def info(self) -> dict[str, Any]:
        """The adapter's info: fresh (and remembered again) when it ran, e.g. with an API's fingerprint;
        else the info remembered when it was last loaded; else it is loaded now."""
        if self._adapter is not None:
            fresh = checked_info(self._adapter.info(), str(self.spec))
            self.store.put(self._info_key, fresh)
            return fresh
        stored = self.store.get(self._info_key)
        return stored if stored is not None else checked_info(self.adapter().info(), str(self.spec))

    def complete(
        self,
        calls: Mapping[str, Request],
        config: GenerationConfig,
        *,
        desc: str,
        progress: bool = True,
        to_record: Callable[[Generation], dict[str, Any]] = answer_record,
        breaker: int | None = None,
        stored_only: bool = False,
    ) -> Completed:
        """A record for every `key -> request` of `calls` (see the module docstring). `to_record` makes the
        stored record of a generation; `breaker`: failures in a row that stop the call (a ModelError);
        `stored_only`: generate nothing (the keys the store lacks are then absent from the records).

        An answer is stored unless the request failed: an item a data-only backend has no answer for
        (`Generation.missing`) is stored too, so a rerun asks for nothing it cannot get."""
        done = Completed(records=self._readable(self.store.get_many(calls.keys()), to_record))
        missing = [
            Request(id=k, messages=r.messages, meta=r.meta) for k, r in calls.items() if k not in done.records
        ]
        if not missing or stored_only:
            return done
        pending = {request.id: request for request in missing}
        where = str(self.spec)
        in_a_row = 0
        with tqdm(total=len(missing), desc=desc, unit="call", disable=not progress) as bar:
            for item in _answers(self.adapter().generate(missing, config), where):
                request, generation = checked_answer(item, pending, where, owned=self._owned)
                record = to_record(generation)
                if not generation.failed:
                    self.store.put(request.id, record)
                done.records[request.id] = record
                done.fresh.add(request.id)
                done.prompt_tokens += generation.usage.prompt_tokens
                done.completion_tokens += generation.usage.completion_tokens
                done.failed += generation.failed
                bar.update(1)
                in_a_row = in_a_row + 1 if generation.failed else 0
                if breaker is not None and in_a_row >= breaker:
                    raise ModelError(
                        f"{breaker} requests in a row failed (last: {generation.error})",
                        where=where,
                        fix="the run stopped and every answer so far is stored; fix the model or server, "
                        "then run the same command again to resume",
                    )
        if pending and not self._owned:  # a model given in memory broke the protocol: its caller hears it
            raise ConfigError(
                f"the model's generate() answered {len(missing) - len(pending)} of the {len(missing)} "
                f"requests it was given (the answers given are stored)",
                where=where,
                fix=PROTOCOL_FIX,
            )
        for request_id in pending:  # a backend that skipped a request never leaves a caller waiting for it
            done.records[request_id] = to_record(Generation(text=None, error=NOTHING_RETURNED))
            done.failed += 1
        return done

    def _readable(
        self, records: dict[str, dict[str, Any]], to_record: Callable[[Generation], dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
        """The stored answers that read back as answers; any other is named on stderr and set aside in
        the store (asked again). Only answer records (`answer_record`) are checked."""
        if to_record is not answer_record:
            return records
        bad = {key: problem for key, record in records.items() if (problem := answer_problem(record))}
        if bad:
            self.store.set_aside(bad)
            first = next(iter(bad.values()))
            print(
                f"rolebench: set aside {len(bad)} stored answer(s) of {self.spec} that are not valid "
                f"answers (first: {first}) in {self.store.path}: they are asked again",
                file=sys.stderr,
            )
        return {key: record for key, record in records.items() if key not in bad}

    def close(self) -> None:
        if self._adapter is not None and self._owned:
            self._adapter.close()
