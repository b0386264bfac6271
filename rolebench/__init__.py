"""rolebench: the RoleBench role-playing benchmark (RoleLLM, arXiv 2310.00746) as an evaluation harness.

The public API: `rouge_l` (the benchmark's ROUGE-L under any protocol, for other harnesses and
training loops) and the error family. Everything else is reached through the command line or the
subpackages; importing `rolebench` stays light (the scorer is loaded on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rolebench.errors import ConfigError, DataError, MissingDependency, ModelError, RoleBenchError

if TYPE_CHECKING:
    from rolebench.scoring.protocols import rouge_l

__version__ = "0.2.0"

__all__ = [
    "ConfigError",
    "DataError",
    "MissingDependency",
    "ModelError",
    "RoleBenchError",
    "__version__",
    "rouge_l",
]


def __getattr__(name: str) -> Any:
    if name == "rouge_l":
        from rolebench.scoring.protocols import rouge_l

        return rouge_l
    raise AttributeError(f"module 'rolebench' has no attribute {name!r}")
