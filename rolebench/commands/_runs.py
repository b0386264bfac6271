"""How the commands that work on a saved run open it: under its lock, repaired after an interrupted write."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rolebench.evaluation.rescore import repair
from rolebench.storage.run_folder import locked_run


@contextmanager
def open_run(run_dir: Path) -> Iterator[Path]:
    """Hold the run folder's lock; if results.json and a samples file disagree, re-score them first."""
    with locked_run(run_dir) as folder:
        if (folder / "results.json").is_file():
            stale = repair(folder)
            if stale:
                print(
                    f"rolebench: results.json did not match the samples of {', '.join(stale)} "
                    "(an interrupted write): re-scored from the saved samples",
                    file=sys.stderr,
                )
        yield folder
