"""`rolebench demo`: the main job on the embedded model, with whatever RoleBench data is at hand.

Evaluate the embedded SmolLM2-135M-Instruct on English role generalization (speaking style and role
knowledge of the same 10 held-out roles; the model does not speak Chinese) with the RoleBench data
found first: --data-dir, $ROLEBENCH_DATA, a shared/rolebench folder beside the working folder or the
checkout, the Hub when it answers, else the packaged demo. Print the scores, a few answers, and the
`rolebench evaluate` command that is the same job (every setting is an ordinary evaluate option), as
a command that runs in a new shell (this environment's `rolebench` script when another or none is on
PATH). The RoleBench run and the packaged demo's run (not RoleBench) never share a folder: they have
different default folders, and a folder holding one is refused for the other.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from rolebench.commands._arguments import Subparsers
from rolebench.errors import ConfigError

MODEL = "smollm2:135m"
TASKS = ("rolebench_eng_role",)  # CUS, RAW and SPE of the 10 held-out English roles
DEMO_TASKS = ("rolebench_demo",)  # the packaged demo, when no RoleBench data is reachable
LIMIT = 30  # per task: 60 answers, 3 per role and task
OUTPUT = Path("runs/demo")  # the default run folder of the RoleBench demo ...
PACKAGED_OUTPUT = Path("runs/demo-packaged")  # ... and of the packaged demo (not RoleBench)
REPETITION_PENALTY = 1.15  # SmolLM2-135M loops without it


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "demo",
        help="run the main job on the embedded SmolLM2 model (no download)",
        description=__doc__.split("\n\n")[1].replace("\n", " ") if __doc__ else None,
    )
    p.add_argument(
        "--output",
        type=Path,
        help=f"run folder (default {OUTPUT}; {PACKAGED_OUTPUT} for the packaged demo: not RoleBench)",
    )
    p.add_argument("--limit", type=int, default=LIMIT, help="samples per task")
    p.add_argument(
        "--data-dir",
        help="a RoleBench folder in the Hub layout (default: $ROLEBENCH_DATA, else a shared/rolebench "
        "folder beside the working folder or the checkout, else the Hub if it answers, else the "
        "packaged demo)",
    )
    p.add_argument("--examples", type=int, default=3, help="answers to show")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(run=run)


def find_data(explicit: str | None) -> tuple[str | None, str]:
    """(the data folder or None for the Hub / the packaged demo, a sentence saying which)."""
    from model_adapters.network import offline
    from rolebench.data.source import DATA_DIR_ENV, UPSTREAM_REPO, UPSTREAM_REVISION

    if explicit:
        return explicit, f"RoleBench data from --data-dir ({explicit})"
    if os.environ.get(DATA_DIR_ENV):
        return os.environ[DATA_DIR_ENV], f"RoleBench data from ${DATA_DIR_ENV} ({os.environ[DATA_DIR_ENV]})"
    checkout = Path(__file__).resolve().parents[2]  # the source checkout (rolebench/commands/demo.py)
    for root in (Path.cwd().parent, checkout.parent, Path.cwd()):
        candidate = root / "shared" / "rolebench"
        if (candidate / "rolebench-eng").is_dir():
            return str(candidate), f"RoleBench data found at {candidate}"
    if not offline():
        return None, f"RoleBench data from the Hub ({UPSTREAM_REPO}@{UPSTREAM_REVISION[:7]})"
    return (
        None,
        "no RoleBench data reachable (no $ROLEBENCH_DATA, no shared/rolebench, no network): "
        "the packaged demo",
    )


def same_job(data_dir: str | None, tasks: tuple[str, ...], args: argparse.Namespace) -> list[str]:
    """The `rolebench evaluate` arguments of this demo: it runs them, and prints them to run again."""
    argv = ["--model", MODEL, "--tasks", ",".join(tasks), "--limit", str(args.limit)]
    argv += ["--repetition-penalty", str(REPETITION_PENALTY), "--output", str(args.output)]
    return argv + (["--data-dir", data_dir] if data_dir is not None else [])


def held_tasks(output: Path) -> set[str]:
    """The tasks a run folder holds: planned in its run.json, or with a samples file."""
    from rolebench.run.folder import RunFolder
    from rolebench.run.record import RunRecord

    folder = RunFolder(output)
    record = RunRecord.read(folder) if folder.path.is_dir() else None
    return set(folder.sample_tasks()) | (set(record.config.tasks) if record is not None else set())


def check_output(output: Path, packaged: bool) -> None:
    """ConfigError when `output` holds the other demo's run: the packaged demo's answers (not RoleBench)
    never mix with a RoleBench run, nor RoleBench answers with the packaged demo's."""
    from rolebench.tasks.catalogue import resolve

    demo = {task.name for task in resolve(list(DEMO_TASKS))[0]}
    held = held_tasks(output)
    other = held - demo if packaged else held & demo
    if other:
        holds = "a RoleBench run" if packaged else "the packaged demo's run (not RoleBench)"
        raise ConfigError(
            f"{output} holds {holds} ({', '.join(sorted(other))}), not this demo's",
            where="--output",
            fix=f"choose another --output (this demo's default: {PACKAGED_OUTPUT if packaged else OUTPUT})",
        )


def rolebench_command() -> list[str]:
    """How a new shell runs this environment's `rolebench`: `rolebench` when that is the one on PATH,
    else the path of this environment's script (relative when under the working folder), else
    `python -m rolebench.cli` with this interpreter."""
    script = Path(sysconfig.get_path("scripts")) / "rolebench"
    if not script.is_file():
        return [sys.executable, "-m", "rolebench.cli"]
    found = shutil.which("rolebench")
    if found is not None and Path(found).resolve() == script.resolve():
        return ["rolebench"]
    try:
        return [str(script.absolute().relative_to(Path.cwd()))]
    except ValueError:
        return [str(script.absolute())]


def run(args: argparse.Namespace) -> int:
    from model_adapters.network import offline
    from rolebench.commands._outcome import exit_code
    from rolebench.commands.evaluate import options_from_argv
    from rolebench.evaluation.api import evaluate
    from rolebench.report.summary import summary_text
    from rolebench.run.folder import RunFolder

    data_dir, said = find_data(args.data_dir)
    packaged = data_dir is None and offline()
    tasks = DEMO_TASKS if packaged else TASKS
    if args.output is None:
        args.output = PACKAGED_OUTPUT if packaged else OUTPUT
    check_output(args.output, packaged)
    argv = same_job(data_dir, tasks, args)
    options = {**options_from_argv(argv), "progress": not args.no_progress}
    print(f"rolebench demo: {said}; model {MODEL}; tasks {', '.join(tasks)}; --limit {args.limit}")
    results = evaluate(options.pop("model"), options.pop("tasks"), **options)
    print(summary_text(results))
    shown = 0
    for task in results.results:
        for record in RunFolder(args.output).read_samples(task)[: max(0, args.examples - shown)]:
            score = ", ".join(f"{k.upper()} {v:.2f}" for k, v in record.scores.items() if v is not None)
            answer = (record.output or "").strip()
            print(f"\n[{task}] {record.role}: {record.question.strip()}\n> {answer}\n({score})")
            shown += 1
    total = results.config.timings.get("total_s")
    print(
        f"\n{sum(t.n_generated for t in results.results.values())} answers in {total} s; results: "
        f"{RunFolder(args.output).results_path}; the same job (it reuses every stored answer): "
        f"{shlex.join([*rolebench_command(), 'evaluate', *argv])}"
    )
    return exit_code(results)
