"""rolebench: the RoleBench role-playing benchmark (RoleLLM, arXiv 2310.00746) as an evaluation harness.

The public API (the command line is a thin layer over it):
- `evaluate(model, tasks, **options)`: evaluate a model (a spec, a transformers `(model, tokenizer)` in
  memory, or an adapter object) on RoleBench tasks; the run's results;
- `judge(run, judge, against=None, **options)`: the LLM-judge win rate of a saved run;
- `score(run, protocol=None)`: score a saved run again (adding a ROUGE-L protocol);
- `read_results(run)`: a run's results;
- `rouge_l(predictions, references, ...)`: the benchmark's ROUGE-L under any protocol, for other
  harnesses and training loops;
- the error family (`RoleBenchError`; `ConfigError` and `DataError` for bad input).
Importing `rolebench` stays light: each function is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rolebench.errors import ConfigError, DataError, MissingDependency, ModelError, RoleBenchError

if TYPE_CHECKING:
    from rolebench.evaluation.api import evaluate, judge, read_results, score
    from rolebench.scoring.protocols import rouge_l

__version__ = "0.2.0"

__all__ = [
    "ConfigError",
    "DataError",
    "MissingDependency",
    "ModelError",
    "RoleBenchError",
    "__version__",
    "evaluate",
    "judge",
    "read_results",
    "rouge_l",
    "score",
]

_LAZY = {
    "evaluate": "rolebench.evaluation.api",
    "judge": "rolebench.evaluation.api",
    "score": "rolebench.evaluation.api",
    "read_results": "rolebench.evaluation.api",
    "rouge_l": "rolebench.scoring.protocols",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rolebench' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
