"""The recipes of `rolebench recipe` and their flags (context-instruct, rolegpt, describe-role,
build-splits, rocit, grpo); what each does is in `rolebench.commands.recipe`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers


def add_recipes(p: argparse.ArgumentParser) -> None:
    """The RECIPE subcommands of `rolebench recipe`, each with its flags."""
    recipes = p.add_subparsers(dest="recipe", metavar="RECIPE", required=True)
    _context_instruct(recipes)
    _rolegpt(recipes)
    _describe_role(recipes)
    _build_splits(recipes)
    _rocit(recipes)
    _grpo(recipes)


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
