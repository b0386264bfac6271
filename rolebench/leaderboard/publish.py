"""Publishing a built leaderboard folder to a Hub dataset repo, and model-card eval results.

`publish_folder` uploads the tables and every `results.json` under the folder in one commit
(`HfApi.upload_folder`, repo_type="dataset"). `model_index` turns a model's rows into the Hub's
model-index entries (`EvalResult`), which `update_model_card` merges into a model repo's card
(the merge rule of `metadata_update`) and `write_model_index` writes to a YAML file.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from rolebench.data.hub_errors import hub_errors
from rolebench.errors import ConfigError, DataError
from rolebench.leaderboard.boards import OURS, SPLIT_LABELS, Board, Row
from rolebench.leaderboard.build import OUTPUT_FILES
from rolebench.leaderboard.items import ITEM_SCORES_FILE
from rolebench.leaderboard.session_turns import SESSION_TURNS_FILE
from rolebench.run.folder import RESULTS_FILE
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS, METRICS
from rolebench.storage.files import write_text_atomic

PUBLISH_PATTERNS = [
    *OUTPUT_FILES,
    f"**/{RESULTS_FILE}",
    RESULTS_FILE,
    f"**/{ITEM_SCORES_FILE}",
    f"**/{SESSION_TURNS_FILE}",
]
DATASET_ID = "ZenMoore/RoleBench"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_METRIC_NAMES = {**{m.key: f"ROUGE-L {m.label} ({m.aspect})" for m in METRICS}, AVG: f"ROUGE-L {LABELS[AVG]}"}


def check_repo_id(repo: str, option: str) -> str:
    if not _REPO_ID.match(repo or ""):
        raise ConfigError(
            f"bad Hub repo id {repo!r}", where=option, fix="write ORG/NAME, e.g. my-org/rolebench-leaderboard"
        )
    return repo


def files_to_publish(folder: Path) -> list[str]:
    """Relative paths `publish_folder` uploads: the leaderboard tables, every results.json and the per-item
    scores beside it."""
    folder = Path(folder)
    if not (folder / OUTPUT_FILES[0]).is_file():
        raise DataError(
            "not a built leaderboard folder",
            where=str(folder),
            fix="run `rolebench leaderboard build RESULTS... --out FOLDER` first",
        )
    found = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return [f for f in found if any(fnmatch.fnmatch(f, pattern) for pattern in PUBLISH_PATTERNS)]


def publish_folder(
    folder: Path,
    repo: str,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    private: bool | None = None,
    message: str | None = None,
) -> str:
    """Create the dataset repo if needed and upload the folder's tables and results; return the commit URL."""
    from huggingface_hub import HfApi

    check_repo_id(repo, "--repo")
    files_to_publish(folder)
    api = HfApi(endpoint=endpoint, token=token)
    with hub_errors(f"publish to {repo}", f"hf://datasets/{repo}", endpoint="--endpoint"):
        api.create_repo(repo, repo_type="dataset", exist_ok=True, private=private)
        info = api.upload_folder(
            repo_id=repo,
            folder_path=str(folder),
            repo_type="dataset",
            allow_patterns=PUBLISH_PATTERNS,
            commit_message=message or "Update RoleBench leaderboard",
        )
    return str(info.commit_url)


def _eval_results(row: Row) -> list[Any]:
    from huggingface_hub import EvalResult

    common: dict[str, Any] = {
        "task_type": "text-generation",
        "task_name": "Role-playing (RoleBench)",
        "dataset_type": DATASET_ID,
        "dataset_name": f"RoleBench: {SPLIT_LABELS[row.split]}",
        "dataset_config": row.split,
        "dataset_split": "test",
        "dataset_revision": row.revision,
        "source_name": "rolebench",
        "source_url": "https://arxiv.org/abs/2310.00746",
    }
    found = [
        EvalResult(
            metric_type="rouge",
            metric_name=_METRIC_NAMES[m],
            metric_value=round(getattr(row, m), 4),
            metric_config=f"protocol={row.protocol}",
            **common,
        )
        for m in (*METRIC_KEYS, AVG)
        if getattr(row, m) is not None
    ]
    if row.win_rate is not None:
        found.append(
            EvalResult(
                metric_type="win_rate",
                metric_name="Win rate vs RoleGPT (%)",
                metric_value=round(100 * row.win_rate, 2),
                metric_config=f"judge={row.judge}",
                **common,
            )
        )
    return found


def model_rows(boards: Sequence[Board], model: str | None) -> list[Row]:
    """Our complete rows of one model (by name or spec); the only model when `model` is None."""
    rows = [r for b in boards for r in b.rows if r.source == OURS and not r.partial]
    names = sorted({r.model for r in rows})
    if model is None:
        if len(names) != 1:
            raise ConfigError(
                f"the leaderboard has {len(names)} models",
                where="--model",
                fix="name one of: " + ", ".join(names) if names else "build it from complete runs",
            )
        model = names[0]
    chosen = [r for r in rows if model in (r.model, r.spec)]
    if not chosen:
        raise ConfigError(
            f"no complete row of model {model!r}", where="--model", fix="one of: " + ", ".join(names)
        )
    return chosen


def model_index(boards: Sequence[Board], model: str | None = None) -> list[dict[str, Any]]:
    """The model-index block (Hub model-card eval results) of one model's complete rows."""
    from huggingface_hub.repocard_data import eval_results_to_model_index

    rows = model_rows(boards, model)
    return eval_results_to_model_index(rows[0].model, [e for row in rows for e in _eval_results(row)])


def write_model_index(path: Path, index: list[dict[str, Any]]) -> Path:
    write_text_atomic(path, yaml.safe_dump({"model-index": index}, sort_keys=False, allow_unicode=True))
    return Path(path)


def merge_model_card(text: str | None, index: list[dict[str, Any]]) -> str:
    """A model card with these eval results merged in: a result for the same dataset config and metric is
    replaced, every other result and all other metadata and text are kept (as `metadata_update` does)."""
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    card = ModelCard(text or "---\n{}\n---\n", ignore_metadata_errors=True)
    name, fresh = model_index_to_eval_results(index)
    data: Any = card.data  # a ModelCardData: eval_results and model_name are its fields
    kept = [old for old in data.eval_results or [] if not any(old.is_equal_except_value(e) for e in fresh)]
    data.eval_results = kept + fresh
    data.model_name = data.model_name or name
    return str(card)


def update_model_card(
    repo: str, index: list[dict[str, Any]], *, endpoint: str | None = None, token: str | None = None
) -> str:
    """Merge the eval results into a model repo's README.md card and commit it; return the commit URL.

    Done with `HfApi(endpoint=...)` calls rather than `metadata_update`, which cannot be pointed at
    another endpoint; the merge rule is the same.
    """
    import tempfile

    from huggingface_hub import HfApi

    check_repo_id(repo, "--model-card-repo")
    api = HfApi(endpoint=endpoint, token=token)
    with (
        hub_errors(f"update the model card of {repo}", f"hf://{repo}", endpoint="--endpoint"),
        tempfile.TemporaryDirectory() as tmp,
    ):
        text = None
        if "README.md" in api.list_repo_files(repo, repo_type="model"):
            text = Path(api.hf_hub_download(repo, "README.md", repo_type="model", local_dir=tmp)).read_text(
                "utf-8"
            )
        info = api.upload_file(
            path_or_fileobj=merge_model_card(text, index).encode("utf-8"),
            path_in_repo="README.md",
            repo_id=repo,
            repo_type="model",
            commit_message="Add RoleBench eval results",
        )
    return str(info.commit_url)
