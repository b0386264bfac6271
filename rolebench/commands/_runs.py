"""How the commands that work on a saved run open it: under its lock, repaired after an interrupted write."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rolebench.evaluation.assemble import rebuild
from rolebench.evaluation.folder import damaged_results
from rolebench.evaluation.rescore import repair
from rolebench.storage.run_folder import locked_run


@contextmanager
def open_run(run_dir: Path, *, rebuild_damaged: bool = False) -> Iterator[Path]:
    """Hold the run folder's lock; if results.json and the samples files disagree, compute it again from
    them first. A damaged results.json is rebuilt when `rebuild_damaged` (`rolebench score`), else it is
    the one-line error that says how to rebuild it."""
    with locked_run(run_dir) as folder:
        if rebuild_damaged and damaged_results(folder)[1] is not None:
            rebuild(folder)
            print(
                "rolebench: results.json was damaged: rebuilt from run.json, the samples files and the "
                "generation store",
                file=sys.stderr,
            )
        elif (folder / "results.json").is_file():
            stale = repair(folder)
            if stale:
                print(
                    f"rolebench: results.json did not match the samples of {', '.join(stale)} "
                    "(an interrupted write): re-scored from the saved samples",
                    file=sys.stderr,
                )
        yield folder
