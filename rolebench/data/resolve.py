"""The RoleBench source a command reads: `--data-dir`, else $ROLEBENCH_DATA, else the Hub (pinned revision).

A folder made by `rolebench data build`, or `hf://ORG/NAME@VERSION`, is a packaged build, read
through `rolebench.data.packaged.PackagedSource` in the same upstream layout as a local copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from rolebench.data.packaged import is_packaged_location, open_packaged
from rolebench.data.source import DATA_DIR_ENV, UPSTREAM_REPO, UPSTREAM_REVISION, DataSource
from rolebench.errors import DataError


def resolve_source(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    repo: str | None = None,
    revision: str | None = None,
) -> DataSource:
    """Pick the data source: `data_dir`, else $ROLEBENCH_DATA, else the Hub repo at a pinned revision.

    A packaged build (`hf://ORG/NAME@VERSION`, or a folder made by `rolebench data build`) is read
    through `rolebench.packaged_source.PackagedSource`, in the same upstream layout.
    """
    chosen = data_dir if data_dir is not None else os.environ.get(DATA_DIR_ENV) or None
    if chosen is not None and repo is None:
        if is_packaged_location(str(chosen)):
            return open_packaged(str(chosen), revision=revision)
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise DataError(
                f"RoleBench data folder {root} does not exist",
                where="--data-dir" if data_dir is not None else DATA_DIR_ENV,
                fix="point it at a folder in the Hub layout (rolebench-eng/, rolebench-zh/, profiles-*/)",
            )
        chosen_by = "--data-dir" if data_dir is not None else f"${DATA_DIR_ENV}"
        return DataSource("local", str(root.resolve()), chosen_by=chosen_by)
    return DataSource("hub", repo or UPSTREAM_REPO, revision or UPSTREAM_REVISION)
