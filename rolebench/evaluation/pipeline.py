"""`rolebench evaluate` as a pipeline of named steps: plan -> generate -> score -> aggregate -> write.

Generations go into DIR/generations.sqlite the moment they arrive, keyed by the model spec, its
options, the decoding settings and the exact messages; a run started again with the same arguments
finds them there, generates only what is missing, and loads no model at all when nothing is.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from model_adapters import GenerationConfig, ModelSpec, Request, model_identity
from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import DEMO_SOURCE, Sample, load_samples
from rolebench.data.source import DataSource
from rolebench.data.splits import get_split
from rolebench.errors import ConfigError
from rolebench.prompts.roleplay import prompt_template_hash, role_messages
from rolebench.results.schema import (
    RESULTS_FILE,
    GroupResult,
    RunResults,
    TaskResult,
    command_line,
    now_iso,
    package_versions,
    read_results,
    read_samples,
    write_results,
    write_samples,
)
from rolebench.scoring.aggregate import BootstrapSettings, aggregate_run
from rolebench.scoring.metrics import score_sample
from rolebench.scoring.protocols import ScoringProtocol, get_protocol
from rolebench.storage.records import RecordStore
from rolebench.tasks.catalogue import GroupSpec, TaskSpec, resolve

GENERATIONS_FILE = "generations.sqlite"


@dataclass(frozen=True)
class EvalOptions:
    """Everything `rolebench evaluate` was asked to do (recorded in results.json)."""

    model: str
    tasks: tuple[str, ...]
    output: Path
    data_dir: str | None = None
    revision: str | None = None
    limit: int | None = None
    protocol: str = "rolebench"
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    max_new_tokens: int | None = None  # None: the task file's max_gen_toks
    model_options: dict[str, Any] = field(default_factory=dict)
    include_paths: tuple[Path, ...] = ()
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)
    progress: bool = True


@dataclass
class TaskPlan:
    spec: TaskSpec
    samples: list[Sample]
    requests: list[Request]
    config: GenerationConfig


def plan_tasks(options: EvalOptions, specs: Sequence[TaskSpec], source: DataSource) -> list[TaskPlan]:
    """Load each task's samples and build one chat request per sample."""
    plans = []
    for spec in specs:
        samples = load_samples(spec.split, source, limit=options.limit)
        max_tokens = options.max_new_tokens or spec.max_new_tokens or options.generation.max_new_tokens
        config = replace(options.generation, max_new_tokens=max_tokens)
        requests = [
            Request(
                id=s.id,
                messages=role_messages(s.role, s.description, s.question, s.language),
                meta={"baseline": s.baseline, "role": s.role, "question": s.question, "split": s.split},
            )
            for s in samples
        ]
        plans.append(TaskPlan(spec, samples, requests, config))
    return plans


def generation_key(model: CachedModel, config: GenerationConfig, request: Request) -> str:
    """The store key of one generation: the model, decoding, messages, and any data the model reads."""
    meta = {key: request.meta.get(key) for key in model.meta_keys}
    return model.key("generation", config.decoding_key(), request.messages, meta)


def generate_task(plan: TaskPlan, model: CachedModel, options: EvalOptions) -> dict[str, dict[str, Any]]:
    """Outputs of every request of a task by request id, generating only what the store lacks."""
    keys = {r.id: generation_key(model, plan.config, r) for r in plan.requests}
    stored = model.store.get_many(keys.values())
    outputs = {rid: stored[key] for rid, key in keys.items() if key in stored}
    missing = [r for r in plan.requests if r.id not in outputs]
    if not missing:
        return outputs
    bar = tqdm(
        total=len(missing), desc=f"generate {plan.spec.name}", unit="sample", disable=not options.progress
    )
    for request, generation in model.adapter().generate(missing, plan.config):
        record = {
            "output": generation.text,
            "error": generation.error,
            "seconds": generation.seconds,
            "usage": vars(generation.usage),
            "finish_reason": generation.finish_reason,
        }
        if generation.text is not None:
            model.store.put(keys[request.id], record)
        outputs[request.id] = record
        bar.update(1)
    bar.close()
    return outputs


def sample_record(
    sample: Sample, request: Request, generated: dict[str, Any], protocol: ScoringProtocol
) -> dict[str, Any]:
    """One line of DIR/samples/<task>.jsonl."""
    scores = score_sample(
        protocol,
        split=sample.split,
        output=generated["output"],
        references=sample.references,
        raw_answer=sample.raw_answer,
    )
    return {
        "id": sample.id,
        "index": sample.index,
        "role": sample.role,
        "question": sample.question,
        "messages": request.messages,
        "output": generated["output"],
        "error": generated.get("error"),
        "usage": generated.get("usage"),
        "references": list(sample.references),
        "raw_answer": sample.raw_answer,
        "baseline": sample.baseline,
        "types": list(sample.types),
        "language": sample.language,
        "description": sample.description,
        "scores": scores,
    }


def check_output_dir(options: EvalOptions) -> None:
    """Refuse to mix two models' runs in one folder."""
    if (options.output / RESULTS_FILE).is_file():
        previous = read_results(options.output).config.get("model", {}).get("spec")
        if previous and previous != options.model:
            raise ConfigError(
                f"{options.output} holds a run of {previous}, not {options.model}",
                where="--output",
                fix="choose another output folder",
            )


def build_config(
    options: EvalOptions,
    model_info: dict[str, Any],
    source: DataSource,
    specs: Sequence[TaskSpec],
    protocol: ScoringProtocol,
    plans: Sequence[TaskPlan],
) -> dict[str, Any]:
    scheme = ModelSpec.parse(options.model).scheme
    generation = plans[0].config.as_dict() if plans else options.generation.as_dict()
    return {
        "model": {
            **model_info,
            "spec": options.model,
            "scheme": scheme,
            "options": {k: str(v) for k, v in options.model_options.items()},
        },
        "data": data_provenance(source, specs),
        "tasks": {s.name: s.describe() for s in specs},
        "prompt": {
            "template_hash": prompt_template_hash(),
            "system_role": model_info.get("system_role", "system"),
            "chat_template_sha256": model_info.get("chat_template_sha256"),
        },
        "scoring": protocol.describe(),
        "generation": generation,
        "judge": None,
        "limit": options.limit,
        "bootstrap": options.bootstrap.describe(),
        "packages": package_versions(),
        "command": command_line(),
    }


def data_provenance(source: DataSource, specs: Sequence[TaskSpec]) -> dict[str, Any]:
    """The source's provenance; the packaged demo's own under `builtin` when demo tasks ran."""
    builtin = [s for s in specs if get_split(s.split).builtin]
    if len(builtin) == len(specs):
        return {**DEMO_SOURCE.describe(), "kind": "builtin-demo"}
    described = source.describe()
    if builtin:
        described["builtin"] = DEMO_SOURCE.describe()
    return described


def evaluate(options: EvalOptions) -> RunResults:
    """Run the whole pipeline and write DIR/results.json and DIR/samples/*.jsonl."""
    started = time.perf_counter()
    specs, groups = resolve(list(options.tasks), options.include_paths)
    protocol = get_protocol(options.protocol)
    model_identity(options.model, options.model_options)  # a bad spec or option fails before any work
    check_output_dir(options)
    source = resolve_source(options.data_dir, revision=options.revision)
    plans = plan_tasks(options, specs, source)
    options.output.mkdir(parents=True, exist_ok=True)
    with RecordStore(options.output / GENERATIONS_FILE, "generations") as store:
        model = CachedModel(options.model, options.model_options, store)
        try:
            outputs = [generate_task(plan, model, options) for plan in plans]
            model_info = model.info()
        finally:
            model.close()
    generated_at = time.perf_counter()
    results = score_and_write(options, plans, outputs, protocol, groups)
    results.config = build_config(options, model_info, source, specs, protocol, plans)
    results.config["timings"] = {
        "generation_s": round(generated_at - started, 3),
        "scoring_s": round(time.perf_counter() - generated_at, 3),
        "total_s": round(time.perf_counter() - started, 3),
    }
    write_results(options.output, results)
    return results


def score_and_write(
    options: EvalOptions,
    plans: Sequence[TaskPlan],
    outputs: Sequence[dict[str, dict[str, Any]]],
    protocol: ScoringProtocol,
    groups: Sequence[GroupSpec],
) -> RunResults:
    """Score every sample, write the samples files, and aggregate into a RunResults (config filled later)."""
    records = {}
    for plan, generated in zip(plans, outputs, strict=True):
        records[plan.spec.name] = [
            sample_record(s, r, generated[r.id], protocol)
            for s, r in zip(plan.samples, plan.requests, strict=True)
        ]
        write_samples(options.output, plan.spec.name, records[plan.spec.name])
    splits = {plan.spec.name: plan.spec.split for plan in plans}
    task_results, group_values = aggregate_run(records, splits, groups, protocol, options.bootstrap)
    return RunResults(created=now_iso(), config={}, results=task_results, groups=group_values)


def rescore(run_dir: Path, protocol_name: str, bootstrap: BootstrapSettings | None = None) -> RunResults:
    """Re-score a run's saved samples under a protocol, keeping every other field (e.g. the judge's)."""
    previous = read_results(run_dir)
    protocol = get_protocol(protocol_name)
    boot = bootstrap or BootstrapSettings(**previous.config.get("bootstrap", {}))
    records, splits = {}, {}
    for task, old in previous.results.items():
        records[task], splits[task] = read_samples(run_dir, task), old.split
        for record in records[task]:
            record["scores"] = score_sample(
                protocol,
                split=old.split,
                output=record["output"],
                references=record["references"],
                raw_answer=record.get("raw_answer"),
            )
        write_samples(run_dir, task, records[task])
    specs = [GroupSpec(name, tuple(g.tasks), "", Path()) for name, g in previous.groups.items()]
    fresh_tasks, fresh_groups = aggregate_run(records, splits, specs, protocol, boot)
    task_results = {
        t: TaskResult(**{**previous.results[t].model_dump(), **r.model_dump()})
        for t, r in fresh_tasks.items()
    }
    kept = {
        name: {k: v for k, v in g.model_dump().items() if k != "opencompass_total"}
        for name, g in previous.groups.items()
    }  # a protocol-specific number never outlives its protocol
    groups = {name: GroupResult(**{**kept[name], **g.model_dump()}) for name, g in fresh_groups.items()}
    config = {**previous.config, "scoring": protocol.describe(), "bootstrap": boot.describe()}
    config["rescored"] = {"at": now_iso(), "command": command_line()}
    results = RunResults(created=previous.created, config=config, results=task_results, groups=groups)
    write_results(run_dir, results)
    return results
