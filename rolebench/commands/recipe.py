"""`rolebench recipe`: regenerate RoleBench data (Context-Instruct, RoleGPT, role profiles), build the
train/test splits, and train RoleLLaMA / RoleGLM (RoCIT). The work is in `rolebench/recipes/`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rolebench.commands._arguments import Subparsers
from rolebench.commands._recipe_arguments import add_recipes
from rolebench.errors import ConfigError

if TYPE_CHECKING:
    from rolebench.recipes.data.generation import GeneratorSettings


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "recipe",
        help="regenerate RoleBench data and train RoleLLaMA/RoleGLM (see docs/RECIPES.md)",
        description="Recipes of the RoleLLM paper: Context-Instruct, RoleGPT, role profiles, "
        "splits, and RoCIT (LoRA role-conditioned instruction tuning); and GRPO with RoleBench's "
        "ROUGE-L as the reward.",
    )
    add_recipes(p)
    p.set_defaults(run=run)


def cache_path(args: argparse.Namespace) -> Path:
    from rolebench.storage.records import cache_dir

    return args.cache if args.cache is not None else cache_dir() / "recipes.sqlite"


def generator_settings(args: argparse.Namespace) -> GeneratorSettings:
    from model_adapters import GenerationConfig
    from rolebench.recipes.data.generation import GeneratorSettings
    from rolebench.settings_model import key_values

    options = {**key_values(args.model_args), **({"base_url": args.base_url} if args.base_url else {})}
    config = GenerationConfig(
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        batch_size=args.batch_size,
        concurrency=args.concurrency,
    )
    return GeneratorSettings(
        spec=args.generator,
        cache=cache_path(args),
        options=options,
        config=config,
        progress=not args.no_progress,
    )


def run_context_instruct(args: argparse.Namespace) -> int:
    from rolebench.recipes.data.context_instruct import ContextInstructOptions, run_context_instruct
    from rolebench.recipes.data.rolegpt import read_descriptions

    description = args.description or (
        read_descriptions(args.desc, (args.role,))[args.role] if args.desc else ""
    )
    report = run_context_instruct(
        ContextInstructOptions(
            role=args.role,
            profile=args.profile,
            out=args.out,
            generator=generator_settings(args),
            description=description,
            language=args.language,
            segment_chars=args.segment_chars,
            max_segments=args.max_segments,
            n_questions=args.questions,
            agnostic_requests=args.agnostic_requests,
            dedup_threshold=args.dedup_threshold,
        )
    )
    print(f"{report.line()}\nwrote {args.out}")
    return 0


def run_rolegpt(args: argparse.Namespace) -> int:
    from rolebench.recipes.data.rolegpt import RoleGPTOptions, run_rolegpt

    baseline = (
        None
        if args.no_baseline
        else (args.baseline_out or args.out.with_name(args.out.stem + ".baseline.jsonl"))
    )
    line = run_rolegpt(
        RoleGPTOptions(
            instructions=args.instructions,
            roles=tuple(args.roles),
            desc=args.desc,
            out=args.out,
            generator=generator_settings(args),
            baseline_out=baseline,
            dialogues=args.dialogues,
            shots=args.shots,
            n=args.n,
            language=args.language,
            limit=args.limit,
        )
    )
    print(f"{line}\nwrote {args.out}" + (f" and {baseline}" if baseline else ""))
    return 0


def run_describe_role(args: argparse.Namespace) -> int:
    from rolebench.recipes.data.describe import DescribeOptions, describe_roles

    entries = describe_roles(
        DescribeOptions(
            roles=tuple(args.role),
            generator=generator_settings(args),
            out=args.out,
            language=args.language,
            work=args.work,
        )
    )
    print(json.dumps(entries, ensure_ascii=False, indent=2))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def run_build_splits(args: argparse.Namespace) -> int:
    from rolebench.recipes.data.splits import SplitOptions, build_splits

    manifest = build_splits(
        SplitOptions(
            data=args.data,
            out=args.out,
            seed=args.seed,
            test_fraction=args.test_fraction,
            held_out_roles=tuple(args.held_out_roles),
            held_out_fraction=args.held_out_fraction,
        )
    )
    print(
        json.dumps(
            {"held_out_roles": manifest["held_out_roles"], "counts": manifest["counts"]},
            ensure_ascii=False,
            indent=2,
        )
    )
    print(f"wrote {args.out}")
    return 0


def parse_overrides(items: list[str]) -> dict[str, object]:
    from rolebench.storage.yaml_files import load_yaml

    overrides = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"bad override {item!r}", where="--set", fix="write KEY=VALUE, e.g. training.max_steps=10"
            )
        overrides[key.strip()] = load_yaml(value, f"--set {key.strip()}")
    return overrides


def config_name(args: argparse.Namespace) -> str:
    """The CONFIG of a training recipe, given as CONFIG or (the old spelling) --config CONFIG."""
    given = [name for name in (args.config, args.config_flag) if name is not None]
    if not given or len(set(given)) > 1:
        raise ConfigError(
            "no config given" if not given else f"two configs given ({given[0]} and {given[1]})",
            where="CONFIG",
            fix=f"rolebench recipe {args.recipe} CONFIG: a shipped config or a YAML file",
        )
    return str(given[0])


def run_rocit(args: argparse.Namespace) -> int:
    from rolebench.recipes.training.rocit.config import load_config
    from rolebench.recipes.training.rocit.recipe import run_rocit
    from rolebench.report.summary import summary_text

    config = load_config(config_name(args), parse_overrides(args.set))
    report = run_rocit(config, progress=not args.no_progress, evaluate=not args.no_eval)
    if report.adapter is None:
        return 0  # a non-main process of `accelerate launch`
    print(
        f"{report.data_line}\ntrained {report.steps} steps: loss {report.first_loss} -> {report.last_loss}\n"
        f"adapter: {report.adapter}"
    )
    for label, results in report.evaluations.items():
        print(f"\n[{label}]\n{summary_text(results)}")
    return 0


def run_grpo(args: argparse.Namespace) -> int:
    from rolebench.recipes.training.grpo.config import load_grpo_config
    from rolebench.recipes.training.grpo.recipe import run_grpo
    from rolebench.recipes.training.length_guard import LengthHacking
    from rolebench.report.compare import compare_table

    config, path = load_grpo_config(config_name(args), parse_overrides(args.set))
    report = run_grpo(config, path, progress=not args.no_progress, evaluate=not args.no_eval)
    if report.adapter is None:
        return 0  # a non-main process of `accelerate launch`
    print(f"start: {report.start}\n{report.reward_line()}\nadapter: {report.adapter}")
    if report.evaluations:
        folders = "; ".join(
            f"{label}: {report.evaluations[label].config.model.get('spec')} in {folder}"
            for label, folder in report.folders.items()
        )
        print(f"\n{compare_table(report.evaluations)}\n\nruns ({folders})")
    if report.guard is not None and report.guard.stopped:
        raise LengthHacking(
            f"the length guard stopped training at step {report.steps}: {report.guard.stopped}",
            where=str(Path(config.output_dir) / "train_log.jsonl"),
            fix="lower the learning rate or raise grpo.beta (KL to the start); "
            "set length_guard.action: warn to go on",
        )
    return 0


RUNNERS = {
    "context-instruct": run_context_instruct,
    "rolegpt": run_rolegpt,
    "describe-role": run_describe_role,
    "build-splits": run_build_splits,
    "rocit": run_rocit,
    "grpo": run_grpo,
}


def run(args: argparse.Namespace) -> int:
    return RUNNERS[args.recipe](args)
