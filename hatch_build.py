"""Build hook: compile the optional C accelerators of ROUGE-L scoring into the wheel.

- `rolebench.scoring._token_codes`: the `rolebench` protocol's tokens (rolebench/scoring/f_measure.py);
- `rolebench.scoring._union_lcs`: the `rolellm` protocol's union LCS (rolebench/scoring/rolellm.py).

Without them, numpy / Python paths compute the same scores, slower. So a failed compile (no C
compiler, no Python headers) only warns, and the wheel stays pure Python. ROLEBENCH_NO_ACCELERATOR=1
skips them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULES = {  # module: its C source
    "rolebench.scoring._token_codes": "rolebench/scoring/_token_codes.c",
    "rolebench.scoring._union_lcs": "rolebench/scoring/_union_lcs.c",
}


class AcceleratorBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("ROLEBENCH_NO_ACCELERATOR") == "1":
            return
        try:
            built = self._compile()
        except Exception as error:  # setuptools raises CompileError, LinkError, PlatformError...
            self.app.display_warning(
                f"rolebench: the C accelerators {', '.join(MODULES)} were not built ({type(error).__name__}: "
                f"{error}); ROUGE-L uses its numpy and Python paths (same scores, slower). Install a C "
                "compiler and the Python headers, then reinstall, to build them."
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":  # an editable install imports the copies built in place
            for path in built:
                build_data["force_include"][str(path)] = path.relative_to(self.root).as_posix()

    def _compile(self) -> list[Path]:
        """Build the extensions in place, next to their sources, and return their paths."""
        from setuptools import Distribution, Extension

        root = Path(self.root)
        extensions = [Extension(name, [source]) for name, source in MODULES.items()]
        distribution = Distribution({"name": "rolebench", "ext_modules": extensions})
        command = distribution.get_command_obj("build_ext")
        command.inplace = True
        command.build_temp = str(root / "build" / "accelerator")
        old = os.getcwd()
        os.chdir(root)  # setuptools resolves in-place outputs against the working directory
        try:
            command.ensure_finalized()
            command.run()
            return [root / command.get_ext_filename(name) for name in MODULES]
        finally:
            os.chdir(old)
