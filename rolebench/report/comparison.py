"""`rolebench compare A B` as a function (`compare_folders`) and its text (`comparison_text`): the
single-turn tasks both runs hold (`rolebench.report.paired`, shown by `rolebench.report.compare`) and the
session tasks both played the same way (`rolebench.report.session_paired`), side by side."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rolebench.report.compare import _p_text, comparison_table
from rolebench.report.paired import compare_runs, load_run, shared_tasks
from rolebench.report.session_paired import compare_sessions, sessions_table, shared_session_tasks
from rolebench.run.definition import check_resampling
from rolebench.run.folder import RunFolder
from rolebench.scoring.resampling import Resampling


def compare_folders(
    run_a: str | Path, run_b: str | Path, *, resamples: int | None = None, seed: int | None = None
) -> dict[str, Any]:
    """`rolebench compare A B` as a function: the comparison document (what `--json` writes) of two run
    folders, on the single-turn tasks both hold (`rolebench.report.paired`) and on the session tasks both
    played the same way (its "sessions" block, `rolebench.report.session_paired`); `resamples` and `seed`
    default to run A's bootstrap settings."""
    check_resampling(resamples or 0, seed or 0, where="rolebench compare")
    where = f"{run_a} vs {run_b}"
    with ExitStack() as stack:  # each folder's lock while it is read (once when A and B are one folder)
        folder_a = stack.enter_context(RunFolder(run_a).lock())
        same = folder_a.path.resolve() == Path(run_b).resolve()
        folder_b = folder_a if same else stack.enter_context(RunFolder(run_b).lock())
        results_a, results_b = folder_a.read_results(), folder_b.read_results()
        sessions = shared_session_tasks(results_a, results_b, where)
        single = any(t in results_b.results for t in results_a.results) or not sessions
        tasks = shared_tasks(results_a, results_b, where) if single else []  # none shared: its error
        run_a_, run_b_ = load_run(folder_a.path, results_a, tasks), load_run(folder_b.path, results_b, tasks)
    boot = {**results_a.config.bootstrap}
    count = int(resamples if resamples is not None else boot.get("resamples", 1000))
    seed = int(seed if seed is not None else boot.get("seed", 0))
    check_resampling(count, seed, where=f"{run_a}/results.json (give --bootstrap and --seed)")
    settings = Resampling(resamples=count, confidence=float(boot.get("confidence", 0.95)), seed=seed)
    if tasks:
        document = compare_runs(run_a_, run_b_, settings)
    else:
        document = {
            "a": {"run": str(run_a_.path), "model": run_a_.spec},
            "b": {"run": str(run_b_.path), "model": run_b_.spec},
            "bootstrap": asdict(settings),
        }
    if sessions:
        document["sessions"] = compare_sessions(results_a, results_b, sessions, settings, where)
    return document


def comparison_text(document: Mapping[str, Any]) -> str:
    """The whole comparison on a terminal: the single-turn table (when the runs share single-turn tasks),
    then the sessions table (when they share session tasks)."""
    if "tasks" in document:
        parts = [comparison_table(document)]
    else:
        parts = [
            f"A: {document['a']['run']} ({document['a']['model']})",
            f"B: {document['b']['run']} ({document['b']['model']})",
        ]
    if "sessions" in document:
        parts += ["", sessions_table(document, _p_text)]
    return "\n".join(parts)
