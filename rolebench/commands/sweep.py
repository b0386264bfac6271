"""`rolebench sweep FILE --output DIR`: the (model, task) jobs of a sweep file on Ray, a run folder per model.

A sweep file (YAML):
```yaml
models:
  - hf:Qwen/Qwen2.5-0.5B-Instruct                 # a spec ...
  - spec: vllm:meta-llama/Llama-3.1-8B-Instruct    # ... or a mapping
    name: llama8b                                 # run folder DIR/llama8b (default: from the spec)
    model_args: {tensor_parallel_size: 2}         # added to (and over) the file's model_args
    num_gpus: 2                                   # Ray resources of the job (with data_parallel=N:
    num_cpus: 4                                   #   of each replica); also `resources: {NAME: n}`
tasks: [rolebench_eng_instruct, rolebench_zh]
limit: 100                                        # any `rolebench evaluate` option, by its flag name
judge: openai:gpt-4o
```
The options are `rolebench evaluate`'s, read and checked exactly as its `--config FILE` reads them;
a bad key, value, spec, option or task is refused in one line before any job starts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rolebench.commands._arguments import Subparsers
from rolebench.commands._sweep_file import load_sweep
from rolebench.errors import ConfigError


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="evaluate many models on many tasks as jobs on Ray (a cluster, or a local Ray)",
        description="Run every (model, task) job of a sweep file (YAML: models, tasks and any `rolebench "
        "evaluate` option) as Ray tasks asking for each model's resources. Each model gets an ordinary "
        "run folder DIR/<name>; DIR/sweep.json records each job (state, attempts, node, timings). "
        "Running it again resumes: finished jobs are skipped, partial ones go on from their saved answers "
        "(also after Ray failed under the driver: the sweep then ends in one line, exit 1).",
    )
    p.add_argument("file", type=Path, help="the sweep file (YAML)")
    p.add_argument("--output", type=Path, required=True, help="folder of the run folders and sweep.json")
    p.add_argument(
        "--ray-address",
        help="join this Ray cluster (default: $RAY_ADDRESS; without one, a local Ray on 127.0.0.1 "
        "is started for the sweep)",
    )
    p.add_argument(
        "--leaderboard", action="store_true", help="build DIR/leaderboard from the runs at the end"
    )
    p.add_argument(
        "--max-retries", type=int, default=2, help="Ray retries of a job whose worker died or failed"
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from model_adapters.ray_runtime import require_ray
    from rolebench.sweep.driver import run_sweep

    require_ray("rolebench sweep")
    if args.max_retries < 0:
        raise ConfigError("--max-retries must be 0 or more", where="--max-retries")
    plan = load_sweep(args.file, args.output)
    outcome = run_sweep(
        plan,
        args.output,
        address=args.ray_address,
        max_retries=args.max_retries,
        progress=not args.no_progress,
        leaderboard=args.leaderboard,
    )
    print(f"sweep: {outcome.line().split('; first failure')[0]}; state: {outcome.state_file}")
    if outcome.leaderboard is not None:
        print(f"leaderboard: {outcome.leaderboard / 'index.html'}")
    if outcome.failed:
        print(f"rolebench: sweep: {outcome.line()} (run the sweep again to resume)", file=sys.stderr)
        return 1
    return 0
