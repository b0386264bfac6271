"""`make test` says why tests were skipped, grouped by reason, and how to run them (issue 36 item 5): the
hook in tests/conftest.py, run on a small suite of its own in a pytest subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

SUITE = """
import pytest

@pytest.mark.parametrize("n", range(3))
def test_needs_data(n):
    pytest.skip("RoleBench data not found at /nowhere: set ROLEBENCH_DATA to a local copy in the Hub layout")

def test_needs_a_module():
    pytest.importorskip("a_module_no_one_installs")

def test_runs():
    assert 1 + 1 == 2
"""


def test_skipped_tests_are_counted_by_reason_with_how_to_run_them(tmp_path):
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_terminal_summary\n")
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "4 skipped, by reason" in out, out
    lines = out.splitlines()
    data = next(i for i, line in enumerate(lines) if "RoleBench data not found at /nowhere" in line)
    assert lines[data].split()[0] == "3" and "ROLEBENCH_DATA=DIR" in lines[data + 1]
    module = next(i for i, line in enumerate(lines) if "a_module_no_one_installs" in line)
    assert lines[module].split()[0] == "1" and "make test" in lines[module + 1]
    assert data < module  # most first
