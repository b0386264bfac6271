"""lm-evaluation-harness hooks for the RoleBench tasks: thin calls into the rolebench package.

The docs, the RoleGPT prompt and the ROUGE-L scorer are the package's own (rolebench.data,
rolebench.prompt, rolebench.sample_scores), so `lm_eval --include_path tasks/` and
`rolebench evaluate` compute the same numbers. Data comes from $ROLEBENCH_DATA (a local folder in
the Hub layout) or, if unset, the Hub repo at rolebench's pinned revision; pass
`--metadata '{"data_dir": "...", "protocol": "opencompass"}'` to lm_eval to override.
"""

from __future__ import annotations

from typing import Any

from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.prompts.roleplay import system_prompt
from rolebench.scoring.metrics import score_sample
from rolebench.scoring.protocols import get_protocol

_PROTOCOL = {"name": "rolebench"}


def load_docs(
    split: str,
    data_dir: str | None = None,
    revision: str | None = None,
    protocol: str = "rolebench",
    limit: int | None = None,
    **_: Any,
) -> dict[str, Any]:
    """custom_dataset hook: {"test": datasets.Dataset} of one RoleBench split, one doc per sample."""
    import datasets

    _PROTOCOL["name"] = protocol
    samples = load_samples(split, resolve_source(data_dir, revision=revision), limit=limit)
    docs = []
    for sample in samples:
        doc = sample.to_dict()
        doc["system_prompt"] = system_prompt(sample.role, sample.description, sample.language)
        doc["prompt_question"] = sample.question.strip()
        doc["target"] = sample.references[0] if sample.references else ""
        docs.append(doc)
    return {"test": datasets.Dataset.from_list(docs)}


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Per-doc ROUGE-L values; metrics that cannot be computed (no raw answer) are left out."""
    scores = score_sample(
        get_protocol(_PROTOCOL["name"]),
        split=doc["split"],
        output=results[0],
        references=doc["references"],
        raw_answer=doc.get("raw_answer"),
    )
    return {name: value for name, value in scores.items() if value is not None}
