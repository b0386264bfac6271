"""`rolebench evaluate`: generate answers for RoleBench tasks with a model, score them, write a run folder."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolebench.commands._arguments import (
    Parser,
    Subparsers,
    add_config_argument,
    add_data_arguments,
    model_options,
)
from rolebench.errors import ConfigError
from rolebench.results.schema import RunResults

if TYPE_CHECKING:
    from rolebench.evaluation.options import EvalOptions
    from rolebench.judge.run import JudgeSettings
    from rolebench.prompts.elicitation import Elicitation


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate a model on RoleBench tasks",
        description="Evaluate a model on RoleBench tasks: generate, score (ROUGE-L), optionally judge, and "
        "write the run folder DIR/results.json + DIR/samples/. A run folder holds one run: running again "
        "with more tasks adds them, with the same ones resumes (stored answers are reused), and other "
        "settings are refused (see --overwrite).",
    )
    add_arguments(p)
    p.set_defaults(run=run)


def options_from_argv(argv: list[str], *, progress: bool = True) -> EvalOptions:
    """The EvalOptions `rolebench evaluate ARGV` would run (e.g. the job `rolebench demo` prints)."""
    parser = Parser(prog="rolebench evaluate")
    add_arguments(parser)
    return eval_options(parser.parse_args(argv), progress=progress)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        help="model spec: hf:ID[@REV], peft:BASE+ADAPTER, openai:MODEL[@URL], "
        "llamacpp:PATH, smollm2:135m (the embedded model), vllm:ID, lmeval:NAME,args, baseline:rolegpt, "
        "and the floors baseline:question, baseline:description",
    )
    p.add_argument("--tasks", help="comma-separated task or group names (see `rolebench tasks`)")
    add_config_argument(p)
    p.add_argument("--output", type=Path, help="the run folder (default: runs/<model>)")
    add_data_arguments(p)
    p.add_argument(
        "--limit", type=int, help="evaluate N samples of each task: a seeded sample stratified over roles"
    )
    p.add_argument(
        "--limit-mode",
        default="stratified",
        choices=["stratified", "first"],
        help="how --limit picks samples: stratified (default) or the first N rows (as lm-eval's --limit)",
    )
    p.add_argument("--limit-seed", type=int, default=0, help="seed of the stratified --limit sample")
    p.add_argument(
        "--elicitation",
        metavar="METHOD",
        help="how the role is prompted (the RoleLLM paper's RoleGPT methods): zero-shot (default), "
        "few-shot-prompt (demonstrations in the user turn) or few-shot-dialogue (demonstrations as earlier "
        "turns); demonstrations are dialogue pairs retrieved per question from the role's own script",
    )
    p.add_argument(
        "--shots",
        type=int,
        metavar="N",
        help="demonstrations per question for a few-shot --elicitation (3 when not given; 0 is zero-shot)",
    )
    p.add_argument(
        "--protocol",
        default="rolellm",
        help="headline ROUGE-L protocol: rolellm (the paper's recall, default), rolebench (F-measure) or "
        "opencompass; rolellm and rolebench are always computed",
    )
    _generation_arguments(p)
    _judge_arguments(p)
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for confidence intervals")
    p.add_argument(
        "--include-path", type=Path, action="append", default=[], help="extra folder of task YAMLs"
    )
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --output if another model or other settings made it (the same run goes "
        "on: its stored answers are reused, a damaged results.json is rebuilt from them)",
    )


def _generation_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("generation")
    g.add_argument(
        "--max-new-tokens",
        type=int,
        help="answer length cap in tokens (default: each task's own max_gen_toks, fitted to its references: "
        "160 for English tasks, 256 Chinese general, 320 Chinese role-specific; see `rolebench tasks`)",
    )
    g.add_argument("--temperature", type=float, default=0.0, help="sampling temperature; 0 = greedy")
    g.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (1.0: every token)")
    g.add_argument(
        "--repetition-penalty",
        type=float,
        default=1.0,
        help="above 1 discourages repeats (default 1.0: none)",
    )
    g.add_argument("--seed", type=int, default=0, help="seed of sampling and of the bootstrap intervals")
    g.add_argument(
        "--batch-size",
        type=int,
        default=8,
        help="prompts per forward pass (local models; llama.cpp: sequences decoded together)",
    )
    g.add_argument("--concurrency", type=int, default=8, help="requests in flight (API models)")
    g.add_argument("--base-url", help="OpenAI-compatible server URL for openai: specs")
    g.add_argument(
        "--model-args", default="", help="backend options as key=value,... (e.g. dtype=bfloat16,device=cuda)"
    )


def _judge_arguments(p: argparse.ArgumentParser) -> None:
    j = p.add_argument_group("judge")
    j.add_argument("--judge", help="judge model spec: compute the win rate against the RoleGPT baseline")
    j.add_argument("--judge-limit", type=int, help="judge a seeded sample of N per task")
    j.add_argument("--judge-base-url", help="OpenAI-compatible server URL for the judge")
    j.add_argument(
        "--judge-config", default="rolellm_rank", metavar="NAME|FILE", help="judge definition (YAML)"
    )
    j.add_argument(
        "--price-table", type=Path, metavar="FILE", help="YAML/JSON: model -> $ per 1M input/output tokens"
    )


def default_output(model: str, elicitation: Elicitation | None = None) -> Path:
    """runs/<model>, and runs/<model>-<method>-<N> for a few-shot elicitation (one folder per method)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_")
    if elicitation is not None and elicitation.few_shot:
        name += f"-{elicitation.method}-{elicitation.shots}"
    return Path("runs") / name


def eval_options(
    args: argparse.Namespace,
    *,
    model: str | None = None,
    model_args: dict[str, Any] | None = None,
    output: Path | None = None,
    progress: bool | None = None,
) -> EvalOptions:
    """The EvalOptions of `rolebench evaluate`'s arguments: the one place they are turned into a job.

    `rolebench sweep` calls it too, once per model (its spec, backend options and run folder given)."""
    from model_adapters import GenerationConfig
    from rolebench.evaluation.options import EvalOptions
    from rolebench.prompts.elicitation import Elicitation
    from rolebench.scoring.aggregate import BootstrapSettings
    from rolebench.scoring.protocols import get_protocol

    model = model or args.model
    get_protocol(args.protocol)
    elicitation = Elicitation.parse(args.elicitation, args.shots)
    generation = GenerationConfig(
        temperature=args.temperature,
        top_p=args.top_p,
        repetition_penalty=args.repetition_penalty,
        seed=args.seed,
        batch_size=args.batch_size,
        concurrency=args.concurrency,
    )
    return EvalOptions(
        model=model,
        tasks=tuple(t.strip() for t in args.tasks.split(",") if t.strip()),
        output=output or args.output or default_output(model, elicitation),
        data_dir=args.data_dir,
        revision=args.revision,
        limit=args.limit,
        limit_mode=args.limit_mode,
        limit_seed=args.limit_seed,
        protocol=args.protocol,
        elicitation=elicitation,
        generation=generation,
        max_new_tokens=args.max_new_tokens,
        model_options=model_options(args) if model_args is None else model_args,
        include_paths=tuple(args.include_path),
        bootstrap=BootstrapSettings(resamples=args.bootstrap, seed=args.seed),
        progress=(not args.no_progress) if progress is None else progress,
        overwrite=args.overwrite,
    )


def run(args: argparse.Namespace) -> int:
    from rolebench.evaluation.pipeline import evaluate
    from rolebench.report.summary import summary_text

    for flag in ("model", "tasks"):
        if not getattr(args, flag):
            raise ConfigError(
                f"--{flag} is required",
                where="rolebench evaluate",
                fix=f"give --{flag} on the command line or `{flag}:` in the --config file",
            )
    options = eval_options(args)
    if args.judge:  # a bad judge, judge file or price table fails before any generation
        from rolebench.judge.run import prepare_judge

        prepare_judge(args.judge, judge_settings(args, args.judge_base_url))
    results = evaluate(options)
    if args.judge:
        results = run_judge(args, options.output)
    print(summary_text(results))
    if args.judge:
        from rolebench.judge.outcomes import read_failure_line
        from rolebench.judge.run import JUDGMENTS_DIR

        failed = read_failure_line(options.output / JUDGMENTS_DIR)
        if failed:
            print(f"\njudge {args.judge}: {failed}; see {options.output / JUDGMENTS_DIR}")
    print(f"\nresults: {options.output / 'results.json'}")
    return exit_code(results)


def judge_settings(args: argparse.Namespace, base_url: str | None, reparse: bool = False) -> JudgeSettings:
    """The judge's settings from the judge flags `evaluate`, `judge` and sweep files share."""
    from rolebench.judge.run import JudgeSettings

    return JudgeSettings(
        limit=args.judge_limit,
        concurrency=args.concurrency,
        base_url=base_url,
        progress=not args.no_progress,
        price_table=args.price_table,
        reparse=reparse,
        judge_config=args.judge_config,
        seed=args.seed,
    )


def run_judge(args: argparse.Namespace, run_dir: Path) -> RunResults:
    from rolebench.commands._runs import open_run
    from rolebench.judge.run import judge_run
    from rolebench.results.io import read_results

    with open_run(run_dir):
        judge_run(run_dir, args.judge, settings=judge_settings(args, args.judge_base_url))
        return read_results(run_dir)


def exit_code(results: RunResults) -> int:
    """0, or 1 with one line on stderr when samples or judgments failed (the run resumes)."""
    from rolebench.report.summary import failures

    line = failures(results)
    if line is None:
        return 0
    print(f"rolebench: {line}", file=sys.stderr)
    return 1
