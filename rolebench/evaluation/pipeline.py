"""`rolebench evaluate` as a pipeline of named steps: plan -> generate -> score -> aggregate -> write."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from model_adapters import ModelSpec, model_identity
from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import BASELINE_JOIN, DEMO_SOURCE
from rolebench.data.source import DataSource
from rolebench.evaluation.assemble import assemble, with_model_info
from rolebench.evaluation.folder import claim, merged_config
from rolebench.evaluation.generate import GENERATIONS_FILE, GENERATIONS_TABLE, check_answered, generate_task
from rolebench.evaluation.options import EvalOptions
from rolebench.evaluation.plan import TaskPlan, plan_tasks
from rolebench.evaluation.records import add_scores, sample_record
from rolebench.results.io import write_results
from rolebench.results.provenance import command_line, package_versions
from rolebench.results.schema import RunConfig, RunResults, SampleRecord
from rolebench.scoring.protocols import ScoringProtocol, get_protocol, protocols_for
from rolebench.storage.records import RecordStore
from rolebench.storage.run_folder import locked_run
from rolebench.tasks.catalogue import resolve
from rolebench.tasks.spec import GroupSpec, TaskSpec


def scoring_config(protocols: Sequence[ScoringProtocol]) -> dict[str, Any]:
    """`config.scoring`: the headline protocol (the first) and the description of every protocol held."""
    return {**protocols[0].describe(), "protocols": {p.name: p.describe() for p in protocols}}


def build_config(
    options: EvalOptions,
    identity: dict[str, Any],
    source: DataSource,
    specs: Sequence[TaskSpec],
    plans: Sequence[TaskPlan],
    protocols: Sequence[ScoringProtocol],
) -> RunConfig:
    """How a run's numbers are made, as known before generating (`with_model_info` adds the model's)."""
    generation = plans[0].config.as_dict() if plans else options.generation.as_dict()
    return RunConfig(
        model={
            "spec": options.model,
            "scheme": ModelSpec.parse(options.model).scheme,
            "options": {k: str(v) for k, v in options.model_options.items()},
            "identity": identity,
        },
        data={**data_provenance(source, specs), "baseline_join": BASELINE_JOIN},
        tasks={p.spec.name: {**p.spec.describe(), "generation": p.config.decoding_key()} for p in plans},
        prompt={"template_hash": options.elicitation.template_hash()},
        elicitation=elicitation_config(options, plans),
        scoring=scoring_config(protocols),
        generation=generation,
        limit=options.limit,
        sampling=None
        if options.limit is None
        else {
            "limit": options.limit,
            "mode": options.limit_mode,
            "seed": options.limit_seed,
            "rule": "stratified over roles (Sainte-Lague turns, seeded order inside a role); a larger limit "
            "keeps every sample of a smaller one"
            if options.limit_mode == "stratified"
            else "the first N rows",
        },
        bootstrap=options.bootstrap.describe(),
        packages=package_versions(),
        command=command_line(),
    )


def elicitation_config(options: EvalOptions, plans: Sequence[TaskPlan]) -> dict[str, Any]:
    """`config.elicitation`: the method, its shots and retriever and, per task, the scripts read (each
    role's file and usable pairs; roles with fewer pairs than shots gave every sample what they had)."""
    elicitation = options.elicitation
    block = elicitation.describe()
    if elicitation.few_shot:
        block["tasks"] = {
            plan.spec.name: {
                "scripts": plan.scripts,
                "fewer_pairs_than_shots": {
                    role: script["pairs"]
                    for role, script in plan.scripts.items()
                    if script["pairs"] < elicitation.shots
                },
                "shots_mean": sum(plan.shots) / len(plan.shots) if plan.shots else 0.0,
            }
            for plan in plans
        }
    return block


def data_provenance(source: DataSource, specs: Sequence[TaskSpec]) -> dict[str, Any]:
    """The source's provenance; the packaged demo's own under `builtin` when demo tasks ran."""
    builtin = [s for s in specs if s.split.builtin]
    if len(builtin) == len(specs):
        return {**DEMO_SOURCE.describe(), "kind": "builtin-demo"}
    described = source.describe()
    if builtin:
        described["builtin"] = DEMO_SOURCE.describe()
    return described


def scored_records(
    plans: Sequence[TaskPlan],
    outputs: Sequence[dict[str, dict[str, Any]]],
    protocols: Sequence[ScoringProtocol],
) -> dict[str, list[SampleRecord]]:
    """Every sample of the tasks run now, scored under every protocol the run holds."""
    records: dict[str, list[SampleRecord]] = {}
    for plan, generated in zip(plans, outputs, strict=True):
        shots = plan.shots or [0] * len(plan.samples)
        unscored = [
            sample_record(s, r.messages, generated[r.id], n)
            for s, r, n in zip(plan.samples, plan.requests, shots, strict=True)
        ]
        records[plan.spec.name] = add_scores(unscored, plan.spec.split.id, protocols, protocols[0].name)
    return records


def evaluate(options: EvalOptions) -> RunResults:
    """Run the whole pipeline and write DIR/results.json and DIR/samples/*.jsonl."""
    started = time.perf_counter()
    specs, groups = resolve(list(options.tasks), options.include_paths)
    identity = model_identity(options.model, options.model_options)  # a bad spec or option fails here
    get_protocol(options.protocol)
    source = resolve_source(options.data_dir, revision=options.revision)
    plans = plan_tasks(options, specs, source)
    with locked_run(options.output, create=True):
        return _run(options, identity, specs, groups, source, plans, started)


def _run(
    options: EvalOptions,
    identity: dict[str, Any],
    specs: Sequence[TaskSpec],
    groups: Sequence[GroupSpec],
    source: DataSource,
    plans: Sequence[TaskPlan],
    started: float,
) -> RunResults:
    """The part of `evaluate` that reads and writes the run folder (under its lock)."""
    planned = build_config(options, identity, source, specs, plans, protocols_for(options.protocol, []))
    members = {g.name: list(g.members) for g in groups}
    previous = claim(options.output, options.model, identity, planned, members, options.overwrite)
    protocols = protocols_for(options.protocol, previous.protocols)
    with RecordStore(options.output / GENERATIONS_FILE, GENERATIONS_TABLE) as store:
        model = CachedModel(options.model, options.model_options, store)
        try:
            outputs = [generate_task(plan, model, progress=options.progress) for plan in plans]
            check_answered(options.model, plans, outputs, source)
            model_info = model.info()
        finally:
            model.close()
    generated_at = time.perf_counter()
    for plan in plans:
        previous.splits[plan.spec.name] = plan.spec.split.id
        previous.limits[plan.spec.name] = plan.config.max_new_tokens
    fresh = scored_records(plans, outputs, protocols)
    results = assemble(
        options.output,
        fresh,
        previous,
        protocols,
        options.bootstrap,
        model_spec=options.model,
        groups=members,
    )
    config = build_config(options, identity, source, specs, plans, protocols)
    config = merged_config(previous.config, config, results.results)
    results.config = with_model_info(config.model_copy(update={"judge": results.config.judge}), model_info)
    results.config.timings = {
        "generation_s": round(generated_at - started, 3),
        "scoring_s": round(time.perf_counter() - generated_at, 3),
        "total_s": round(time.perf_counter() - started, 3),
    }
    write_results(options.output, results)
    return results
