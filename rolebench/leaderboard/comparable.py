"""What must agree for two runs' numbers to be compared: the judge, the protocol's definition, and per split
the data files read (a digest of their checksums). The leaderboard's boards and `rolebench compare` both ask
this module, which imports nothing heavy (a comparison starts quickly).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from rolebench.data.splits import SPLITS, benchmark_of, get_benchmark


def family_of(split_id: str) -> str:
    """`zh_general` -> `rolebench_zh`: the task group of the split's benchmark ("" for an unknown split)."""
    benchmark = benchmark_of(split_id)
    return benchmark.group if benchmark else ""


def judge_label(judge: Any) -> str:
    """A readable name of the judge recorded in config.judge (a spec string or a dict); "" for none."""
    if not judge:
        return ""
    if isinstance(judge, Mapping):
        model = judge.get("model")
        name = judge.get("spec") or (
            model.get("spec") or model.get("name") if isinstance(model, Mapping) else model
        )
        return str(name or judge.get("name") or "judge")
    return str(judge)


def judge_key(judge: Any) -> str:
    if not isinstance(judge, Mapping):
        return judge_label(judge)
    prompt = next((judge[k] for k in ("prompt_hash", "template_hash", "prompt") if judge.get(k)), "")
    return f"{judge_label(judge)}|{prompt}|{judge.get('protocol') or ''}"


def protocol_key(scoring: Any, protocol: str) -> str:
    """What must agree for two rows to be ranked together: the shown protocol's definition."""
    if not isinstance(scoring, Mapping):
        return str(scoring)
    described = (scoring.get("protocols") or {}).get(protocol) or scoring
    kept = {k: described.get(k) for k in ("protocol", "references", "tokenizers")}
    return json.dumps(kept, sort_keys=True, default=str)


def data_block(config: Mapping[str, Any], group: str) -> Mapping[str, Any]:
    data = config.get("data") or {}
    builtin, benchmark = data.get("builtin"), get_benchmark(group)
    if benchmark is not None and benchmark.builtin and isinstance(builtin, Mapping):
        return builtin
    return data if isinstance(data, Mapping) else {}


def split_fingerprints(config: Mapping[str, Any], group: str, split_ids: Sequence[str]) -> dict[str, str]:
    """Per split: a digest of the checksums of its files the run read (its revision if none recorded).
    The train file is left out: it changes no metric, only the train floor and the unseen view, and runs
    made before it was read share boards with those made after."""
    data = data_block(config, group)
    recorded = data.get("files") or {}
    found = {}
    for split_id in split_ids:
        split = SPLITS.get(split_id)
        prefixes = [p for p in (split.folder + "/", split.profiles, split.raw_answers) if p] if split else []
        train = split.file("train.jsonl") if split else None
        files = sorted(
            (k, v) for k, v in recorded.items() if any(k.startswith(p) for p in prefixes) and k != train
        )
        found[split_id] = (
            hashlib.sha256(json.dumps(files).encode()).hexdigest()[:8]
            if files
            else f"revision:{data.get('revision') or data.get('kind') or 'unknown'}"
        )
    return found


def dataset_label(config: Mapping[str, Any], group: str, fingerprints: Mapping[str, str]) -> str:
    """The data's revision (or kind: local, builtin-demo) and a short digest of the split's file checksums."""
    data = data_block(config, group)
    name = str(data.get("revision") or data.get("kind") or "unknown")
    digest = hashlib.sha256(json.dumps(sorted(fingerprints.items())).encode()).hexdigest()[:8]
    return f"{name} · {digest}"
