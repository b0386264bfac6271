"""`rolebench evaluate` as a pipeline of named steps: plan -> generate -> score -> aggregate -> write."""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model_adapters import model_identity
from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import BASELINE_JOIN, DEMO_SOURCE
from rolebench.data.source import DataSource
from rolebench.errors import ConfigError
from rolebench.evaluation.generate import GENERATIONS_FILE, GENERATIONS_TABLE, generate_task
from rolebench.evaluation.options import EvalOptions
from rolebench.evaluation.plan import TaskPlan, plan_tasks
from rolebench.evaluation.records import add_scores, sample_record
from rolebench.prompts.roleplay import prompt_template_hash
from rolebench.results.io import RESULTS_FILE, read_results, write_results, write_samples
from rolebench.results.provenance import command_line, now_iso, package_versions
from rolebench.results.schema import RunConfig, RunResults, SampleRecord
from rolebench.scoring.aggregate import GroupDef, aggregate_run
from rolebench.scoring.protocols import ScoringProtocol, get_protocol, protocols_for
from rolebench.storage.files import write_json_atomic
from rolebench.storage.jsonl import read_json
from rolebench.storage.records import RecordStore
from rolebench.storage.run_folder import locked_run
from rolebench.tasks.catalogue import resolve
from rolebench.tasks.spec import GroupSpec, TaskSpec

OWNER_FILE = "run.json"  # which model a run folder belongs to, written before anything else
RUN_FILES = (
    RESULTS_FILE,
    OWNER_FILE,
    "samples",
    "judgments",
    "report.html",
    GENERATIONS_FILE,
    f"{GENERATIONS_FILE}-wal",
    f"{GENERATIONS_FILE}-shm",
)


def claim_output_dir(options: EvalOptions, identity: dict[str, Any]) -> list[str]:
    """Make `options.output` this model's run folder (call under its lock); the protocols it already holds.

    A folder holding another model's run (another spec, options or weights) is refused in one line,
    unless `options.overwrite`: then that run's files are removed first.
    """
    output = options.output
    owner = output / OWNER_FILE
    previous: dict[str, Any] = read_json(owner) if owner.is_file() else {}
    held: list[str] = []
    if (output / RESULTS_FILE).is_file():
        results = read_results(output)
        previous = previous or {
            "model": results.config.model.get("spec"),
            "identity": results.config.model.get("identity"),
        }
        held = list(results.config.scoring.get("protocols") or {})
    same = previous.get("model") in (None, options.model) and previous.get("identity") in (None, identity)
    if not same:
        if not options.overwrite:
            raise ConfigError(
                f"{output} holds a run of {previous.get('model')} (another model or other options)",
                where="--output",
                fix="choose another output folder, or pass --overwrite to replace it",
            )
        for name in RUN_FILES:
            path = output / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        held = []
    write_json_atomic(owner, {"model": options.model, "identity": identity, "claimed": now_iso()})
    return held


def scoring_config(protocols: Sequence[ScoringProtocol]) -> dict[str, Any]:
    """`config.scoring`: the headline protocol (the first) and the description of every protocol held."""
    return {**protocols[0].describe(), "protocols": {p.name: p.describe() for p in protocols}}


def build_config(
    options: EvalOptions,
    model: CachedModel,
    model_info: dict[str, Any],
    source: DataSource,
    specs: Sequence[TaskSpec],
    plans: Sequence[TaskPlan],
    protocols: Sequence[ScoringProtocol],
) -> RunConfig:
    generation = plans[0].config.as_dict() if plans else options.generation.as_dict()
    return RunConfig(
        model={
            **model_info,
            "spec": options.model,
            "scheme": model.spec.scheme,
            "options": {k: str(v) for k, v in options.model_options.items()},
            "identity": model.identity,
        },
        data={**data_provenance(source, specs), "baseline_join": BASELINE_JOIN},
        tasks={p.spec.name: {**p.spec.describe(), "generation": p.config.decoding_key()} for p in plans},
        prompt={
            "template_hash": prompt_template_hash(),
            "system_role": model_info.get("system_role", "system"),
            "chat_template_sha256": model_info.get("chat_template_sha256"),
        },
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


def data_provenance(source: DataSource, specs: Sequence[TaskSpec]) -> dict[str, Any]:
    """The source's provenance; the packaged demo's own under `builtin` when demo tasks ran."""
    builtin = [s for s in specs if s.split.builtin]
    if len(builtin) == len(specs):
        return {**DEMO_SOURCE.describe(), "kind": "builtin-demo"}
    described = source.describe()
    if builtin:
        described["builtin"] = DEMO_SOURCE.describe()
    return described


def group_defs(groups: Sequence[GroupSpec]) -> list[GroupDef]:
    return [GroupDef(g.name, g.members) for g in groups]


def score_and_write(
    output: Path,
    plans: Sequence[TaskPlan],
    outputs: Sequence[dict[str, dict[str, Any]]],
    protocols: Sequence[ScoringProtocol],
    groups: Sequence[GroupSpec],
    options: EvalOptions,
) -> RunResults:
    """Score every sample under every protocol, write the samples files, aggregate (config filled later)."""
    records: dict[str, list[SampleRecord]] = {}
    digests = {}
    for plan, generated in zip(plans, outputs, strict=True):
        unscored = [
            sample_record(s, r.messages, generated[r.id])
            for s, r in zip(plan.samples, plan.requests, strict=True)
        ]
        records[plan.spec.name] = add_scores(unscored, plan.spec.split.id, protocols, protocols[0].name)
        digests[plan.spec.name] = write_samples(output, plan.spec.name, records[plan.spec.name])
    splits = {plan.spec.name: plan.spec.split.id for plan in plans}
    limits = {plan.spec.name: plan.config.max_new_tokens for plan in plans}
    tasks, group_values = aggregate_run(
        records, splits, group_defs(groups), protocols, options.bootstrap, limits, options.model
    )
    for name, result in tasks.items():
        result.samples_sha256 = digests[name]
    return RunResults(created=now_iso(), config=RunConfig(), results=tasks, groups=group_values)


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
    protocols = protocols_for(options.protocol, claim_output_dir(options, identity))
    with RecordStore(options.output / GENERATIONS_FILE, GENERATIONS_TABLE) as store:
        model = CachedModel(options.model, options.model_options, store)
        try:
            outputs = [generate_task(plan, model, progress=options.progress) for plan in plans]
            model_info = model.info()
        finally:
            model.close()
    generated_at = time.perf_counter()
    results = score_and_write(options.output, plans, outputs, protocols, groups, options)
    results.config = build_config(options, model, model_info, source, specs, plans, protocols)
    results.config.timings = {
        "generation_s": round(generated_at - started, 3),
        "scoring_s": round(time.perf_counter() - generated_at, 3),
        "total_s": round(time.perf_counter() - started, 3),
    }
    write_results(options.output, results)
    return results
