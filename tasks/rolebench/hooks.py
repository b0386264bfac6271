"""lm-evaluation-harness hooks for the RoleBench tasks: thin calls into the rolebench package.

The docs, the RoleGPT prompt and the ROUGE-L scorer are the package's own (`rolebench.data`,
`rolebench.prompts`, `rolebench.scoring`), so `lm_eval --include_path tasks/` and
`rolebench evaluate` compute the same numbers. Data comes from $ROLEBENCH_DATA (a local folder in
the Hub layout) or, if unset, the Hub repo at rolebench's pinned revision; pass
`--metadata '{"data_dir": "...", "protocol": "opencompass"}'` to lm_eval to override. The protocol
travels inside each doc, so the scorer needs no state of its own.
"""

from __future__ import annotations

from typing import Any

from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.data.splits import get_split
from rolebench.errors import RoleBenchError
from rolebench.prompts.roleplay import system_prompt
from rolebench.scoring.metrics import Scorable, score_sample
from rolebench.scoring.protocols import DEFAULT_PROTOCOL, get_protocol


def load_docs(
    split: str,
    data_dir: str | None = None,
    revision: str | None = None,
    protocol: str = DEFAULT_PROTOCOL,
    limit: int | None = None,
    **_: Any,
) -> dict[str, Any]:
    """custom_dataset hook: {"test": datasets.Dataset} of one RoleBench split, one doc per sample."""
    import datasets

    try:
        get_protocol(protocol)
        samples = load_samples(split, resolve_source(data_dir, revision=revision), limit=limit)
    except RoleBenchError as exc:  # lm-eval shows a traceback; make its last line say what to do
        raise SystemExit(f"rolebench: error: {exc.line()}") from None
    docs = []
    for sample in samples:
        doc = sample.to_dict()
        doc["system_prompt"] = system_prompt(sample.role, sample.description, sample.language)
        doc["prompt_question"] = sample.question.strip()
        doc["target"] = sample.references[0] if sample.references else ""
        doc["protocol"] = protocol
        docs.append(doc)
    return {"test": datasets.Dataset.from_list(docs)}


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Per-doc ROUGE-L values; metrics that cannot be computed (no raw answer) are left out."""
    split = get_split(doc["split"])
    scores = score_sample(
        get_protocol(doc.get("protocol") or DEFAULT_PROTOCOL),
        split.kind,
        split.language,
        Scorable(results[0], doc["references"], doc.get("raw_answer")),
    )
    return {name: value for name, value in scores.items() if value is not None}
