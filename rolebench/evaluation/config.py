"""How a run's numbers are made, as results.json's `config` says it: built from the run definition and
what planning resolved (the tasks' files, the data read, the prompts), then the model's own info.

The blocks known before generating are built here from the one `RunDefinition` and the plans: `run`,
`model`, `scoring`, `limit`, `sampling`, `bootstrap`, `packages`, `command` by `run_config`; `data`,
`tasks`, `prompt`, `elicitation`, `generation` by `single_turn_config` (the session tasks add
`sessions`: `rolebench.evaluation.sessions`); `with_model_info` adds the model's info, `merged_config` joins
a rerun's config to the folder's, `timings` adds the seconds. Elsewhere: deriving results.json writes
`scoring` and `bootstrap` again from the same sources (`rolebench.evaluation.derive`), `rolebench score`
records `rescored` (`rolebench.run.record`), the judge `judge`, `judges` and `versus`
(`rolebench.judging.results`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from model_adapters import ModelSpec
from rolebench.data.joins import BASELINE_JOIN
from rolebench.data.source import DataSource
from rolebench.errors import ConfigError
from rolebench.evaluation.plan import TaskPlan, decoding_record
from rolebench.results.provenance import command_line, package_versions
from rolebench.results.schema import RunConfig
from rolebench.run.definition import RunDefinition
from rolebench.scoring.protocols import ScoringProtocol, held_protocols

SAMPLING_RULES = {
    "stratified": "stratified over roles (Sainte-Lague turns, seeded order inside a role); a larger limit "
    "keeps every sample of a smaller one",
    "first": "the first N rows",
}
# config.prompt keys that come from the model (its identity covers them), not from the run's settings
MODEL_PROMPT_KEYS = ("system_role", "chat_template_sha256")


def scoring_config(protocols: Sequence[ScoringProtocol]) -> dict[str, Any]:
    """`config.scoring`: the headline protocol (the first) and the description of every protocol held."""
    return {**protocols[0].describe(), "protocols": {p.name: p.describe() for p in protocols}}


def run_config(definition: RunDefinition, identity: dict[str, Any]) -> RunConfig:
    """The run's config as known before planning its tasks: the definition, the model, the scoring and
    bootstrap settings, the `--limit` sample; each part of the run adds its own blocks (`RunPart.configure`)
    and `with_model_info` the model's own info. Its scoring: the protocols the definition holds (a
    `rolebench score` adds more to the folder's record)."""
    return RunConfig(
        run=definition.record(),
        model={
            "spec": definition.model,
            "scheme": _scheme(definition.model),
            "options": dict(definition.model_args),
            "identity": identity,
        },
        scoring=scoring_config(held_protocols(definition.protocol)),
        limit=definition.limit,
        sampling=None
        if definition.limit is None
        else {
            "limit": definition.limit,
            "mode": definition.limit_mode,
            "seed": definition.limit_seed,
            "rule": SAMPLING_RULES[definition.limit_mode],
        },
        bootstrap=definition.bootstrap_settings().describe(),
        packages=package_versions(),
        command=command_line(),
    )


def single_turn_config(
    config: RunConfig, definition: RunDefinition, source: DataSource, plans: Sequence[TaskPlan]
) -> None:
    """The single-turn tasks' blocks of the config as planned: the data read, each task and its decoding,
    the prompt and the elicitation (set with no single-turn task too: the run's prompt and decoding)."""
    elicitation = definition.elicitation_method()
    config.data = {**data_provenance(source, plans), "baseline_join": BASELINE_JOIN}
    config.tasks = {
        p.spec.name: {**p.spec.describe(), "generation": decoding_record(p.config)} for p in plans
    }
    config.prompt = {"template_hash": elicitation.template_hash()}
    config.elicitation = elicitation_config(definition, plans)
    config.generation = decoding_record(plans[0].config if plans else definition.decoding())


def _scheme(spec: str) -> str:
    """The backend a spec names (a model given in memory: the part its spec gives before `:`)."""
    try:
        return ModelSpec.parse(spec).scheme
    except ConfigError:
        return spec.partition(":")[0] if ":" in spec else "in-memory"


def elicitation_config(definition: RunDefinition, plans: Sequence[TaskPlan]) -> dict[str, Any]:
    """`config.elicitation`: the method, its shots and retriever and, per task, the scripts read (each
    role's file and usable pairs; roles with fewer pairs than shots gave every sample what they had)."""
    elicitation = definition.elicitation_method()
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


def data_provenance(source: DataSource, plans: Sequence[TaskPlan]) -> dict[str, Any]:
    """The source's provenance; the packaged demo's own under `builtin` when demo tasks ran."""
    builtin = [p for p in plans if p.spec.split.builtin]
    if plans and len(builtin) == len(plans):
        return {**source.demo().describe(), "kind": "builtin-demo"}
    described = source.describe()
    if builtin:
        described["builtin"] = source.demo().describe()
    return described


def with_model_info(config: RunConfig, info: Mapping[str, Any]) -> RunConfig:
    """A run's config with what the model said about itself (name, revision, chat template...)."""
    model = {**info, **config.model}
    prompt = {
        **config.prompt,
        "system_role": info.get("system_role", "system"),
        "chat_template_sha256": info.get("chat_template_sha256"),
    }
    return config.model_copy(update={"model": model, "prompt": prompt})


def merged_config(before: RunConfig | None, now: RunConfig) -> RunConfig:
    """`now` with the tasks, data files and scripts `before` recorded (the same run going on)."""
    if before is None:
        return now.model_copy(deep=True)
    merged = now.model_copy(
        update={"tasks": {**before.tasks, **now.tasks}, "data": merged_data(before.data, now.data)}, deep=True
    )
    earlier = (before.elicitation or {}).get("tasks") or {}
    if merged.elicitation and earlier:  # the scripts of every task of the run
        merged.elicitation["tasks"] = {**earlier, **merged.elicitation.get("tasks", {})}
    merged.scoring = {
        **now.scoring,
        "protocols": {**before.scoring.get("protocols", {}), **now.scoring["protocols"]},
    }
    if before.sessions or now.sessions:  # every session task of the run, as last planned
        merged.sessions = {**(before.sessions or {}), **(now.sessions or {})}
    if before.model.get("name") and not now.model.get("name"):  # the model's info, until it is loaded again
        merged.model = {**before.model, **now.model}
        merged.prompt = {**before.prompt, **now.prompt}
    return merged


def merged_data(before: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """One run's data provenance over both runs: the files either read; the packaged demo's under
    `builtin` when only some of its tasks are demo tasks."""
    demo = [d for d in (before, now) if d.get("kind") == "builtin-demo"]
    other = [d for d in (before, now) if d.get("kind") != "builtin-demo"]
    if not other:
        return {**now, "files": {**(before.get("files") or {}), **(now.get("files") or {})}}
    base = dict(other[-1])
    base["files"] = {f: s for d in other for f, s in (d.get("files") or {}).items()}
    builtins = [d.get("builtin") for d in other if d.get("builtin")] + [
        {**{k: v for k, v in d.items() if k != "baseline_join"}, "kind": "local"} for d in demo
    ]
    if builtins:
        files = {f: s for b in builtins for f, s in (b.get("files") or {}).items()}
        base["builtin"] = {**builtins[-1], "files": files}
    return base


def timings(started: float, generated: float, finished: float) -> dict[str, float]:
    return {
        "generation_s": round(generated - started, 3),
        "scoring_s": round(finished - generated, 3),
        "total_s": round(finished - started, 3),
    }
