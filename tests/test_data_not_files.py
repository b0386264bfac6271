"""A data file that is not a file (a folder, a FIFO, a symlink to /dev/zero, a symlink loop, a symlink to
nothing) in place of a test or train file is named in one line, exit 2: never read as absent (the train
floor silently dropped), never opened (a FIFO would block the read for ever)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from rolebench.cli.main import main

SPLIT = "rolebench-zh/role_specific"
FILES = (
    f"{SPLIT}/test.jsonl",
    f"{SPLIT}/train.jsonl",
    f"{SPLIT}/rolegpt_baseline.jsonl",
    "profiles-zh/desc.json",
)


@pytest.fixture
def data(rolebench_data: Path, tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for relpath in FILES:
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rolebench_data / relpath, root / relpath)
    return root


def _folder(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "gone.jsonl")


IN_PLACE: dict[str, tuple[Callable[[Path], None], str]] = {
    "folder": (_folder, "is a folder, not a file"),
    "fifo": (_fifo, "is a FIFO (named pipe), not a file"),
    "dev-zero": (_dev_zero, "is a character device, not a file"),
    "loop": (_loop, "is not readable (Too many levels of symbolic links)"),
    "dangling": (_dangling, "gone.jsonl, which does not exist"),
}


@pytest.mark.parametrize("which", ["test.jsonl", "train.jsonl"])
@pytest.mark.parametrize("kind", list(IN_PLACE))
def test_a_data_file_that_is_not_a_file_is_named_in_one_line(which, kind, data, tmp_path, capsys):
    make, expected = IN_PLACE[kind]
    path = data / SPLIT / which
    path.unlink()
    make(path)
    argv = ["evaluate", "--model", "baseline:question", "--tasks", "rolebench_zh_specific", "--no-progress"]
    capsys.readouterr()
    code = main([*argv, "--data-dir", str(data), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"RoleBench file {SPLIT}/{which} " in err and expected in err and f"({path})" in err, err
    assert not (tmp_path / "out/results.json").exists()


def test_an_absent_train_file_is_still_absent_not_an_error(data, tmp_path, capsys):
    (data / SPLIT / "train.jsonl").unlink()
    argv = ["evaluate", "--model", "baseline:question", "--tasks", "rolebench_zh_specific", "--no-progress"]
    assert main([*argv, "--data-dir", str(data), "--output", str(tmp_path / "out")]) == 0
