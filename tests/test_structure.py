"""The house rules of docs/ARCHITECTURE.md that no linter checks: no package module over 300 lines, no
function over 60, unless a comment at its head says why (`# longer: ...`)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rolebench", "model_adapters", "tasks")
MAX_LINES, MAX_FUNCTION = 300, 60
REASON = "# longer:"


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (REPO_ROOT / package).rglob("*.py"))


def test_no_module_over_300_lines_without_a_reason():
    long = [
        f"{p.relative_to(REPO_ROOT)}: {n} lines"
        for p in modules()
        if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_LINES
        and REASON not in "".join(p.read_text(encoding="utf-8").splitlines(keepends=True)[:5])
    ]
    assert not long, "split these by job, or say why at the top (# longer: ...): " + "; ".join(long)


def test_no_function_over_60_lines_without_a_reason():
    long = []
    for path in modules():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                span = (node.end_lineno or node.lineno) - node.lineno + 1
                head = "\n".join(lines[node.lineno - 1 : node.lineno + 2])
                if span > MAX_FUNCTION and REASON not in head:
                    long.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name}: {span} lines")
    assert not long, "make these shorter by named steps, or say why (# longer: ...): " + "; ".join(long)
