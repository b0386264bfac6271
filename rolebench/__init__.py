"""rolebench: the RoleBench role-playing benchmark (RoleLLM, arXiv 2310.00746) as an evaluation harness."""

from __future__ import annotations

from rolebench.errors import ConfigError, DataError, MissingDependency, ModelError, RoleBenchError

__version__ = "0.1.0"

__all__ = ["ConfigError", "DataError", "MissingDependency", "ModelError", "RoleBenchError", "__version__"]
