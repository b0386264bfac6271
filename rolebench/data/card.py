"""The dataset card (README.md) of a build: YAML front matter (configs, license) + a Jinja2 body.

The front matter is built here as data and dumped with PyYAML, so it always parses; the body is the
template `templates/dataset_card.md.j2`, rendered through `rolebench.prompt.render` like every text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rolebench.data.layout import (
    FAITHFUL_VERSION,
    PROFILE_COLUMNS,
    PROFILE_CONFIGS,
    QA_COLUMNS,
    QA_CONFIGS,
    ProfileConfig,
    QAConfig,
)
from rolebench.errors import DataError

TEMPLATE_DIR = Path(__file__).parent / "templates"
CARD_TEMPLATE = "dataset_card.md.j2"
_SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


@dataclass
class TableInfo:
    """One (config, split) of a build: its row counts and its shard files."""

    config: str
    split: str
    rows: int
    files: list[str]
    kinds: dict[str, int] = field(default_factory=dict)
    roles: int = 0
    baseline: int | None = None  # QA configs only
    raw: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "split": self.split,
            "rows": self.rows,
            "files": self.files,
            "kinds": self.kinds,
            "roles": self.roles,
            "baseline": self.baseline,
            "raw": self.raw,
        }


def changelog(version: str, revision: str, changes: list[str]) -> list[dict[str, Any]]:
    """The versions up to `version`, newest first."""
    entries = [
        {
            "version": FAITHFUL_VERSION,
            "changes": [],
            "summary": f"faithful repackaging of the upstream files at revision `{revision}`: every row as "
            "written upstream (duplicates included), `type` as a list, baseline and raw answers "
            "joined as columns.",
        }
    ]
    if version != FAITHFUL_VERSION:
        entries.insert(
            0,
            {
                "version": version,
                "changes": changes,
                "summary": f"{FAITHFUL_VERSION} with these cleanings (computed on this build's rows):",
            },
        )
    return entries


def front_matter(tables: list[TableInfo]) -> dict[str, Any]:
    configs = []
    for name in (*QA_CONFIGS, *PROFILE_CONFIGS):
        splits = [t for t in tables if t.config == name]
        if splits:
            configs.append(
                {
                    "config_name": name,
                    "data_files": [{"split": t.split, "path": list(t.files)} for t in splits],
                }
            )
    total = sum(t.rows for t in tables if t.config in QA_CONFIGS)
    size = next((label for bound, label in _SIZE_CATEGORIES if total < bound), "1M<n<10M")
    return {
        "license": "apache-2.0",
        "language": ["en", "zh"],
        "pretty_name": "RoleBench",
        "task_categories": ["text-generation"],
        "size_categories": [size],
        "tags": ["role-playing", "instruction-following", "benchmark", "rolellm"],
        "configs": configs,
    }


def render_card(
    *,
    version: str,
    tables: list[TableInfo],
    absent: dict[str, str],
    issues: list[str],
    changes: list[str],
    provenance: dict[str, Any],
    hub_repo: str | None = None,
) -> str:
    """The README.md text of a build (`hub_repo`: where it will be pushed, for the usage examples)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    from rolebench.templating import text_environment

    try:
        rolebench_version = package_version("rolebench")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        rolebench_version = "unknown"
    every: list[QAConfig | ProfileConfig] = [*QA_CONFIGS.values(), *PROFILE_CONFIGS.values()]
    configs = [c for c in every if any(t.config == c.name for t in tables)]
    text = (
        text_environment(TEMPLATE_DIR)
        .get_template(CARD_TEMPLATE)
        .render(
            front_matter=yaml.safe_dump(front_matter(tables), sort_keys=False, allow_unicode=True),
            version=version,
            faithful_version=FAITHFUL_VERSION,
            rolebench_version=rolebench_version,
            tables=tables,
            configs=configs,
            qa_columns=QA_COLUMNS,
            profile_columns=PROFILE_COLUMNS,
            absent=absent,
            issues=issues,
            provenance=provenance,
            hub_repo=hub_repo,
            changelog=changelog(version, provenance["revision"], changes),
        )
    )
    return text.strip() + "\n"


def read_front_matter(path: Path) -> dict[str, Any]:
    """The YAML front matter of a card (between the leading `---` lines)."""
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        raise DataError(
            "the dataset card has no YAML front matter", where=str(path), fix="rebuild the dataset"
        )
    data = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    if not isinstance(data, dict):
        raise DataError("the dataset card's front matter is not a mapping", where=str(path))
    return data
