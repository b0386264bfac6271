"""`rolebench recipe`: regenerate RoleBench data (Context-Instruct, RoleGPT, role profiles), build the
train/test splits, and train RoleLLaMA / RoleGLM (RoCIT). The work is in `rolebench/recipes/`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rolebench.commands._arguments import Subparsers
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
    recipes = p.add_subparsers(dest="recipe", metavar="RECIPE", required=True)
    _context_instruct(recipes)
    _rolegpt(recipes)
    _describe_role(recipes)
    _build_splits(recipes)
    _rocit(recipes)
    _grpo(recipes)
    p.set_defaults(run=run)


def _generator_arguments(p: argparse.ArgumentParser, *, temperature: float, max_new_tokens: int) -> None:
    g = p.add_argument_group("generator")
    g.add_argument(
        "--generator", required=True, help="model spec of the generator, e.g. openai:gpt-4o, hf:ID"
    )
    g.add_argument("--base-url", help="OpenAI-compatible server URL for openai: specs")
    g.add_argument("--model-args", default="", help="backend options as key=value,...")
    g.add_argument("--temperature", type=float, default=temperature, help=f"default {temperature}")
    g.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (1.0: every token)")
    g.add_argument("--max-new-tokens", type=int, default=max_new_tokens, help=f"default {max_new_tokens}")
    g.add_argument("--concurrency", type=int, default=8, help="requests in flight (API generators)")
    g.add_argument("--batch-size", type=int, default=8, help="prompts per forward pass (local generators)")
    g.add_argument(
        "--cache", type=Path, help="SQLite cache of generations (default $ROLEBENCH_CACHE/recipes.sqlite)"
    )
    g.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _context_instruct(recipes: Subparsers) -> None:
    p = recipes.add_parser(
        "context-instruct",
        help="role-specific questions/answers from a profile or script",
        description="Context-Instruct: ask a generator for role-specific question/answer pairs grounded in "
        "segments of a role's profile or script (script-based) and in its description (script-agnostic), "
        "drop near-duplicate questions, and write RoleBench role-specific rows (SPE data).",
    )
    p.add_argument("--role", required=True, help="the role's name as it appears in the data")
    p.add_argument(
        "--profile", required=True, type=Path, help="plain-text profile, or a profiles-*-{role}.jsonl script"
    )
    p.add_argument("--out", required=True, type=Path, help="output JSONL (RoleBench role-specific rows)")
    p.add_argument("--description", default="", help="the role's description (for script-agnostic questions)")
    p.add_argument("--desc", type=Path, help="a desc.json to read the role's description from")
    p.add_argument("--language", choices=("en", "zh"), help="default: detected from the profile")
    p.add_argument(
        "--segment-chars", type=int, default=3000, help="characters per profile segment (default 3000)"
    )
    p.add_argument("--max-segments", type=int, help="use only the first N segments")
    p.add_argument("--questions", type=int, default=10, help="questions asked per request (paper: 10)")
    p.add_argument("--agnostic-requests", type=int, default=1, help="script-agnostic requests (seeds 0..N-1)")
    p.add_argument(
        "--dedup-threshold", type=float, default=0.7, help="ROUGE-L F at which a question is a duplicate"
    )
    _generator_arguments(p, temperature=0.7, max_new_tokens=3000)


def _rolegpt(recipes: Subparsers) -> None:
    p = recipes.add_parser(
        "rolegpt",
        help="answer general instructions in role (RoleGPT, dialogue engineering)",
        description="RoleGPT: answer general instructions as each role, with the RoleGPT system prompt and "
        "demonstrations retrieved from the role's own script as earlier turns (dialogue engineering); "
        "--n reference answers per pair (CUS data) and a baseline answer for the judge.",
    )
    p.add_argument(
        "--instructions", required=True, type=Path, help='JSONL with "instruction" (or "question")'
    )
    p.add_argument("--roles", required=True, nargs="+", help="role names (quote names with spaces)")
    p.add_argument("--desc", required=True, type=Path, help="desc.json with the roles' descriptions")
    p.add_argument(
        "--out", required=True, type=Path, help="output JSONL {role, question, generated: [n answers]}"
    )
    p.add_argument("--baseline-out", type=Path, help="baseline answers (default OUT stem + .baseline.jsonl)")
    p.add_argument("--no-baseline", action="store_true", help="no extra baseline answer")
    p.add_argument("--dialogues", type=Path, help="folder with profiles-*-{role}.jsonl (or a RoleBench root)")
    p.add_argument("--shots", type=int, default=3, help="retrieved demonstrations per prompt (default 3)")
    p.add_argument("--n", type=int, default=5, help="reference answers per pair (paper: 5)")
    p.add_argument("--language", choices=("en", "zh"), help="default: detected per role")
    p.add_argument("--limit", type=int, help="only the first N instructions")
    _generator_arguments(p, temperature=0.7, max_new_tokens=512)


def _describe_role(recipes: Subparsers) -> None:
    p = recipes.add_parser(
        "describe-role",
        help="a new role's description and catchphrases (desc.json entry)",
        description="Role profile construction: ask a generator for a role's description (in the second "
        "person) and its catchphrases, and add them to a desc.json in the released format.",
    )
    p.add_argument("--role", required=True, action="append", help="role name (repeat for several)")
    p.add_argument("--work", help="the film, series or book the role is from")
    p.add_argument("--out", type=Path, help="desc.json to add the entries to (default: print only)")
    p.add_argument("--language", choices=("en", "zh"), help="default: detected from the role name")
    _generator_arguments(p, temperature=0.0, max_new_tokens=512)


def _build_splits(recipes: Subparsers) -> None:
    p = recipes.add_parser(
        "build-splits",
        help="instruction- and role-generalization train/test splits",
        description="Split generated RoleBench data into the paper's instruction-generalization (held-out "
        "pairs of every role) and role-generalization (held-out roles) train/test sets, in the Hub layout.",
    )
    p.add_argument(
        "--data", required=True, type=Path, help="folder with general/*.jsonl and role_specific/*.jsonl"
    )
    p.add_argument("--out", required=True, type=Path, help="output folder (Hub layout)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random splits")
    p.add_argument("--test-fraction", type=float, default=0.2, help="held-out share of each role's pairs")
    p.add_argument("--held-out-roles", nargs="+", default=[], help="roles held out for role generalization")
    p.add_argument(
        "--held-out-fraction", type=float, default=0.1, help="share of roles held out when none named"
    )


def _rocit(recipes: Subparsers) -> None:
    p = recipes.add_parser(
        "rocit",
        help="LoRA role-conditioned instruction tuning, then evaluation",
        description="RoCIT: LoRA role-conditioned instruction tuning of a base model on RoleBench train data "
        "(RoleLLaMA, RoleGLM), then `rolebench evaluate` of the adapter, all from one config file.",
    )
    _training_options(
        p, "shipped config (rolellama, roleglm, smoke-cpu) or a YAML file", "training.max_steps=10"
    )


def _grpo(recipes: Subparsers) -> None:
    p = recipes.add_parser(
        "grpo",
        help="GRPO (TRL) with RoleBench's ROUGE-L F as the reward, then evaluation before/after",
        description="GRPO: reinforcement learning with TRL's GRPOTrainer from a base or a RoCIT adapter, "
        "rewarded with RoleBench's ROUGE-L F-measure (rolebench.rewards) on the train split's prompts, "
        "guarded against answers that grow past the length-inflated rule; then `rolebench evaluate` of "
        "the start and of the result, side by side. All from one config file (docs/RECIPES.md).",
    )
    _training_options(
        p, "shipped config (grpo-smoke-cpu, grpo-roleglm, grpo-rolellama) or a YAML file", "grpo.max_steps=10"
    )


def _training_options(p: argparse.ArgumentParser, configs: str, example: str) -> None:
    """What the training recipes share: the config (positional; `--config CONFIG` is the old spelling
    of RoCIT's, still taken), config overrides, train only, progress bars."""
    p.add_argument("config", metavar="CONFIG", nargs="?", help=configs)
    p.add_argument("--config", dest="config_flag", metavar="CONFIG", help=argparse.SUPPRESS)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override a config value, e.g. --set {example} (value parsed as YAML)",
    )
    p.add_argument("--no-eval", action="store_true", help="train only")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")


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
