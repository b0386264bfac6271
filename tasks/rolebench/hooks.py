"""lm-evaluation-harness hooks for the RoleBench tasks: thin calls into the rolebench package.

The docs, the RoleGPT prompt and the ROUGE-L scorer are the package's own (`rolebench.data`,
`rolebench.prompts`, `rolebench.scoring`), so `lm_eval --include_path tasks/` and
`rolebench evaluate` compute the same numbers. Data comes from $ROLEBENCH_DATA (a local folder in
the Hub layout) or, if unset, the Hub repo at rolebench's pinned revision; pass
`--metadata '{"data_dir": "...", "protocol": "opencompass"}'` to lm_eval to override. The protocol
and the data location travel inside each doc, so the scorer and the sampler need no state of their own.

Few-shot (`--num_fewshot N`): `ScriptSampler` gives each question the N dialogue pairs of its role's
own script that `rolebench evaluate --elicitation few-shot-* --shots N` gives it
(`rolebench.data.scripts.ScriptLibrary`, the same retriever), never test items. With
`--apply_chat_template` lm-eval sends them as earlier user/assistant turns (few-shot dialogue
engineering); with `--fewshot_as_multiturn false` too, it writes them into the one user turn, prompt
and reply a line each (few-shot prompt engineering).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from lm_eval.api.samplers import ContextSampler

from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.data.scripts import ScriptLibrary
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
        doc["data_dir"], doc["revision"] = data_dir, revision  # where ScriptSampler finds the role's script
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


@cache
def _library(split: str, data_dir: str | None, revision: str | None) -> ScriptLibrary:
    """One ScriptLibrary per split and source: each role's script read and indexed once per process."""
    return ScriptLibrary(get_split(split), resolve_source(data_dir, revision=revision))


class ScriptSampler(ContextSampler):  # type: ignore[misc]
    """lm-eval's few-shot sampler for RoleBench: the role's own script pairs best matching the question.

    Needs `fewshot_split` to be the test split, so that lm-eval passes the question (`eval_doc`); the
    test docs it also passes are never used. Returns fewer than `n` when the role's script has fewer.
    """

    def sample(
        self, n: int, eval_doc: dict[str, Any] | None = None, df: Any = None, **kwargs: Any
    ) -> list[dict[str, str]]:
        if n <= 0 or eval_doc is None:
            return []
        try:
            library = _library(eval_doc["split"], eval_doc.get("data_dir"), eval_doc.get("revision"))
            pairs = library.demonstrations(eval_doc["role"], eval_doc["prompt_question"], n)
        except RoleBenchError as exc:  # lm-eval shows a traceback; make its last line say what to do
            raise SystemExit(f"rolebench: error: {exc.line()}") from None
        return [{"prompt_question": question, "target": answer} for question, answer in pairs]
