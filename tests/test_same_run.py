"""The one rule of what makes two runs the same run (`rolebench.run.same_run.SAME_RUN`): the guard's
settings, the sweep's identity and the generation keys all follow it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.evaluation.generate import generation_key
from rolebench.evaluation.plan import plan_tasks
from rolebench.run.definition import RunDefinition
from rolebench.run.same_run import BY_VALUE, CHANGES_ANSWERS, RESOLVED_ONLY, SAME_RUN
from rolebench.storage.records import RecordStore
from rolebench.tasks.catalogue import resolve

BASE: dict[str, Any] = {"model": "baseline:rolegpt", "tasks": ("rolebench_demo",)}
# the keys of every request of the packaged demo, few-shot and sampled, taken before the rule was written
GOLDEN_SAMPLED_FEW_SHOT = "7ce666ac787c7680c806220b99030ee69f3b432b5276de1a84ea064bdfef63dd"


def keys(tmp_path: Path, **settings: Any) -> list[str]:
    definition = RunDefinition.model_validate({**BASE, **settings}).checked()
    specs, _ = resolve(list(definition.tasks), ())
    plans = plan_tasks(definition, specs, resolve_source(None))
    with RecordStore(tmp_path / "g.sqlite", "generations") as store:
        model = CachedModel(definition.model, definition.adapter_options(), store)
        return [generation_key(model, p.config, r, p.elicitation) for p in plans for r in p.requests]


def test_the_rule_places_every_setting():
    assert set(SAME_RUN) == set(RunDefinition.model_fields), "a new setting: say how it is compared"
    assert set(RESOLVED_ONLY) <= {name for name, how in SAME_RUN.items() if how != BY_VALUE}


def test_the_guard_compares_the_settings_the_rule_takes_by_value():
    shown = set(RunDefinition.model_validate(BASE).settings())
    by_value = {name for name, how in SAME_RUN.items() if how == BY_VALUE}
    paired = {"elicitation", "shots", "limit_mode", "limit_seed"}
    assert shown == {f"--{n.replace('_', '-')}" for n in by_value - paired} | {
        "--elicitation/--shots",
        "--limit-mode/--limit-seed",
    }


def test_generation_keys_change_with_the_settings_that_change_answers_only(tmp_path):
    sampled = {"temperature": 0.7, "elicitation": "few-shot-dialogue"}
    base = keys(tmp_path / "base", **sampled)
    digest = hashlib.sha256("\n".join(base).encode()).hexdigest()
    assert digest == GOLDEN_SAMPLED_FEW_SHOT  # stored answers of older runs are still found
    changes = {
        "elicitation": "few-shot-prompt",
        "shots": 2,
        "max_new_tokens": 17,
        "temperature": 0.9,
        "top_p": 0.5,
        "repetition_penalty": 1.2,
        "seed": 4,
    }
    assert set(changes) == set(CHANGES_ANSWERS)  # the rule's list of what an answer depends on
    for name, value in changes.items():
        assert set(keys(tmp_path / name, **{**sampled, name: value})).isdisjoint(base), name
    for name, value in {"protocol": "rolebench", "bootstrap": 10}.items():  # the numbers, not the answers
        assert keys(tmp_path / name, **{**sampled, name: value}) == base, name
