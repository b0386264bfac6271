"""What a user sees of the package itself: its metadata (`pip show rolebench`), and messages that never point
at a path of our development machines."""

from __future__ import annotations

import ast
import sys
from importlib.metadata import metadata
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("rolebench", "model_adapters", "tasks")  # what the wheel carries (tasks/ as rolebench/_tasks)
TEXT_SUFFIXES = {".yaml", ".yml", ".j2", ".md", ".txt", ".json", ".html", ".css", ".js"}
DEV_PATH = "../shared"  # where our development machines keep the RoleBench files


def test_the_installed_metadata_names_the_license_and_the_project_urls() -> None:
    """`pip show` (24.1+) shows Home-page from the Homepage URL, and (25.1+) the License-Expression."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        tomllib = pytest.importorskip("tomli")
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = metadata("rolebench")
    assert installed["License-Expression"] == project["license"] == "Apache-2.0"
    assert "LICENSE" in (installed.get_all("License-File") or [])
    assert (REPO_ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
    urls = dict(entry.split(", ", 1) for entry in installed.get_all("Project-URL") or [])
    assert urls == project["urls"]  # the install is of this pyproject.toml (make reinstalls on a change)
    assert {"Homepage", "Repository", "Documentation", "Paper"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())


def shipped_texts() -> list[tuple[str, str]]:
    """(where, text) of every string in the package's code and of every text file it ships."""
    found: list[tuple[str, str]] = []
    for top in SHIPPED:
        for path in sorted((REPO_ROOT / top).rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            where = str(path.relative_to(REPO_ROOT))
            if path.suffix == ".py":
                tree = ast.parse(path.read_text(encoding="utf-8"))
                found += [
                    (f"{where}:{node.lineno}", node.value)
                    for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str)
                ]
            elif path.suffix in TEXT_SUFFIXES:
                found.append((where, path.read_text(encoding="utf-8")))
    return found


def test_no_message_or_shipped_file_suggests_a_development_machine_path() -> None:
    texts = shipped_texts()
    assert len(texts) > 1000  # the scan reads the package
    offending = [where for where, text in texts if DEV_PATH in text]
    assert not offending, f"{DEV_PATH} in {offending}: name a path the user has (--data-dir DIR)"


def test_the_missing_hub_file_line_points_at_a_copy_the_user_can_make() -> None:
    from rolebench.data.source import DataSource
    from rolebench.errors import DataError

    with pytest.raises(DataError) as caught:  # tests run offline: the Hub file is not in the cache
        DataSource("hub", "nobody/RoleBench", "0" * 40).require("rolebench-zh/general/test.jsonl")
    line = str(caught.value)
    assert "shared" not in line and "rolebench data download --to DIR" in line and "--data-dir" in line
